package agentcard

// Caps on card fields (docs/threats.md C.33). A field over its cap is flagged
// with the warning "too-long" or "too-many"; it is never truncated, because
// the stored bytes are what was signed. Display layers may shorten what they
// show. Lengths of names count Unicode code points; descriptions, ids,
// examples and URLs count bytes. The whole document is already bounded by
// strictjson (512 KiB, nesting depth 64), which also bounds
// capabilities.extensions[].params.
const (
	MaxNameChars        = 200     // card name, skill name, provider organization
	MaxDescriptionBytes = 8 << 10 // card and skill descriptions
	MaxSkillIDBytes     = 256     // skills[].id
	MaxVersionBytes     = 128     // the agent's own version string
	MaxSkills           = 200     // skills per card
	MaxTagsPerSkill     = 50      // tags per skill, as written (before de-duplication)
	MaxTagChars         = 100     // one tag
	MaxExamplesPerSkill = 50      // examples per skill
	MaxExampleBytes     = 4 << 10 // one example
	MaxModes            = 50      // entries of one input/output mode list
	MaxInterfaces       = 32      // interfaces per card
	MaxExtensions       = 50      // capabilities.extensions
	MaxSecuritySchemes  = 50      // entries of securitySchemes
	MaxSignatures       = 8       // signatures the verifier examines (docs/verification.md)
	MaxURLBytes         = 2 << 10 // any URL field
)
