package agentfleet

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path"
	"sort"
	"strings"
)

// samples are published cards (copied from the shared testdata, names kept)
// so fleets can serve real shapes: v1, hybrid v1+v0.3, v0.3, v0.2.
//
//go:embed testdata/cards/*.json
var samples embed.FS

// SampleCards returns the embedded published cards by file name.
func SampleCards() map[string][]byte {
	out := map[string][]byte{}
	entries, _ := samples.ReadDir("testdata/cards")
	for _, e := range entries {
		b, err := samples.ReadFile(path.Join("testdata/cards", e.Name()))
		if err == nil {
			out[e.Name()] = b
		}
	}
	return out
}

// SampleCardNames returns the embedded card names, sorted.
func SampleCardNames() []string {
	m := SampleCards()
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// domain is one line of business with its vocabulary, so generated cards
// read like the catalogue of a real enterprise (search benchmarks need a
// realistic vocabulary, docs/design.md "Performance targets").
type domain struct {
	area   string
	role   []string
	skills []skillTemplate
}

type skillTemplate struct {
	id, name, description string
	tags                  []string
	examples              []string
	in, out               []string
}

var orgs = []string{"Northwind", "Contoso", "Fabrikam", "Globex", "Initech", "Umbrella Analytics", "Tailspin", "Wingtip",
	"Adventure Works", "Litware", "Proseware", "Lamna Health", "Woodgrove Bank", "Alpine Ski House", "Coho Vineyard",
	"Blue Yonder Airlines", "Trey Research", "Humongous Insurance", "Fourth Coffee", "Margie's Travel"}

var domains = []domain{
	{"Travel", []string{"Planner", "Concierge", "Booking Assistant"}, []skillTemplate{
		{"flight-search", "Flight Search", "Finds flights between two airports for given dates, cabin class and passenger count, ranked by price and duration.", []string{"travel", "flights", "booking", "airlines"}, []string{"Find a nonstop flight from Boston to Lisbon on 12 May for two adults."}, []string{"text/plain", "application/json"}, []string{"application/json"}},
		{"hotel-booking", "Hotel Booking", "Searches hotels near a location, compares nightly rates and books a room under the corporate travel policy.", []string{"travel", "hotels", "accommodation", "booking"}, []string{"Book a hotel within walking distance of the Berlin convention centre from 3 to 6 June."}, []string{"text/plain"}, []string{"application/json", "text/plain"}},
		{"itinerary-builder", "Itinerary Builder", "Combines flights, hotels and ground transport into a day-by-day itinerary with confirmation numbers.", []string{"travel", "itinerary", "planning"}, []string{"Build an itinerary for a three-day sales visit to Madrid."}, []string{"text/plain"}, []string{"text/markdown"}},
	}},
	{"Finance", []string{"Analyst", "Controller", "Assistant"}, []skillTemplate{
		{"invoice-extraction", "Invoice Extraction", "Reads supplier invoices in PDF or image form and extracts vendor, line items, tax and totals as structured data.", []string{"finance", "invoices", "accounts-payable", "ocr"}, []string{"Extract the line items from this invoice and flag any VAT discrepancies."}, []string{"application/pdf", "image/png"}, []string{"application/json"}},
		{"expense-audit", "Expense Audit", "Checks expense reports against policy limits, detects duplicates and explains each violation.", []string{"finance", "expenses", "compliance", "audit"}, []string{"Audit last month's expense reports for the marketing team."}, []string{"application/json"}, []string{"application/json", "text/plain"}},
		{"cash-forecast", "Cash Flow Forecast", "Projects thirteen-week cash flow from receivables, payables and payroll schedules.", []string{"finance", "forecasting", "treasury"}, []string{"Forecast cash for the next quarter assuming receivables slip by ten days."}, []string{"application/json"}, []string{"application/json", "text/csv"}},
	}},
	{"HR", []string{"Helpdesk", "Recruiter", "Onboarding Guide"}, []skillTemplate{
		{"policy-answers", "Policy Answers", "Answers employee questions about leave, benefits and remote work using the current handbook, citing sections.", []string{"hr", "policies", "benefits", "handbook"}, []string{"How many days of parental leave do I get in Germany?"}, []string{"text/plain"}, []string{"text/plain"}},
		{"candidate-screening", "Candidate Screening", "Summarises applications against a job description and proposes interview questions.", []string{"hr", "recruiting", "hiring"}, []string{"Screen these twelve applications for the senior data engineer role."}, []string{"application/pdf", "text/plain"}, []string{"application/json"}},
		{"onboarding-checklist", "Onboarding Checklist", "Creates a personalised first-week checklist with accounts, trainings and introductions.", []string{"hr", "onboarding", "checklists"}, []string{"Prepare the onboarding plan for a new support engineer in Dublin."}, []string{"text/plain"}, []string{"text/markdown"}},
	}},
	{"DevOps", []string{"Operator", "Incident Responder", "Release Manager"}, []skillTemplate{
		{"incident-triage", "Incident Triage", "Correlates alerts, recent deployments and logs to propose a probable cause and a runbook step.", []string{"devops", "incidents", "observability", "sre"}, []string{"Why did checkout latency spike at 14:05 UTC?"}, []string{"text/plain", "application/json"}, []string{"text/markdown"}},
		{"deploy-review", "Deployment Review", "Reviews a pending release for risky migrations, missing feature flags and failing checks.", []string{"devops", "deployments", "ci", "release"}, []string{"Review release 4.12 of the billing service before it goes to production."}, []string{"application/json"}, []string{"application/json"}},
		{"cost-report", "Cloud Cost Report", "Breaks down cloud spend by team and service and suggests rightsizing opportunities.", []string{"devops", "cloud", "cost", "finops"}, []string{"Which services drove the storage cost increase last week?"}, []string{"text/plain"}, []string{"text/csv", "text/markdown"}},
	}},
	{"Legal", []string{"Counsel", "Contract Reviewer", "Compliance Officer"}, []skillTemplate{
		{"contract-review", "Contract Review", "Compares a contract with the company playbook and lists deviating clauses with suggested redlines.", []string{"legal", "contracts", "redlining", "nda"}, []string{"Review this mutual NDA against our standard terms."}, []string{"application/pdf", "text/plain"}, []string{"text/markdown"}},
		{"gdpr-request", "Data Subject Requests", "Handles GDPR access and deletion requests and tracks statutory deadlines.", []string{"legal", "privacy", "gdpr", "compliance"}, []string{"Log a deletion request received from a customer in France today."}, []string{"text/plain"}, []string{"application/json"}},
	}},
	{"Support", []string{"Agent", "Desk", "Triage Bot"}, []skillTemplate{
		{"ticket-routing", "Ticket Routing", "Classifies incoming support tickets by product, urgency and language and routes them to the right queue.", []string{"support", "tickets", "routing", "classification"}, []string{"Route this ticket about a failed card payment in Spanish."}, []string{"text/plain"}, []string{"application/json"}},
		{"answer-drafting", "Answer Drafting", "Drafts replies from the knowledge base in the customer's language and tone.", []string{"support", "knowledge-base", "writing"}, []string{"Draft a reply explaining how to reset two-factor authentication."}, []string{"text/plain"}, []string{"text/plain"}},
	}},
	{"Sales", []string{"Assistant", "Forecaster", "Account Researcher"}, []skillTemplate{
		{"account-brief", "Account Brief", "Summarises a prospect's news, filings and open opportunities before a meeting.", []string{"sales", "crm", "research", "accounts"}, []string{"Prepare a brief on Globex before tomorrow's renewal call."}, []string{"text/plain"}, []string{"text/markdown"}},
		{"pipeline-forecast", "Pipeline Forecast", "Forecasts the quarter from pipeline stages, historical win rates and deal age.", []string{"sales", "forecasting", "pipeline"}, []string{"What is the commit forecast for EMEA this quarter?"}, []string{"application/json"}, []string{"application/json", "image/png"}},
	}},
	{"Logistics", []string{"Dispatcher", "Planner", "Tracker"}, []skillTemplate{
		{"shipment-tracking", "Shipment Tracking", "Tracks parcels and freight across carriers and predicts delivery delays.", []string{"logistics", "shipping", "tracking", "carriers"}, []string{"Where is container MSKU 7712345 and will it reach Rotterdam on time?"}, []string{"text/plain"}, []string{"application/json"}},
		{"route-optimizer", "Route Optimizer", "Plans delivery routes for a fleet under time windows, vehicle capacity and driver hours.", []string{"logistics", "routing", "maps", "optimization"}, []string{"Plan tomorrow's routes for eight vans out of the Leeds depot."}, []string{"application/json"}, []string{"application/json", "application/vnd.geo+json"}},
	}},
	{"Healthcare", []string{"Scheduler", "Coding Assistant", "Care Navigator"}, []skillTemplate{
		{"appointment-scheduling", "Appointment Scheduling", "Finds open slots across clinics and books appointments respecting referral rules.", []string{"healthcare", "scheduling", "appointments"}, []string{"Book a dermatology follow-up for next week in the north clinic."}, []string{"text/plain"}, []string{"application/json"}},
		{"clinical-coding", "Clinical Coding", "Suggests ICD-10 and procedure codes from discharge summaries with supporting excerpts.", []string{"healthcare", "coding", "icd-10", "billing"}, []string{"Code this discharge summary for a knee replacement."}, []string{"text/plain", "application/pdf"}, []string{"application/json"}},
	}},
	{"Data", []string{"Analyst", "Librarian", "Quality Monitor"}, []skillTemplate{
		{"sql-assistant", "SQL Assistant", "Turns questions into SQL against the warehouse catalogue and explains the result.", []string{"data", "sql", "analytics", "warehouse"}, []string{"How many active customers did we have per region last month?"}, []string{"text/plain"}, []string{"application/json", "text/csv"}},
		{"data-quality", "Data Quality Checks", "Profiles tables, detects schema drift and null spikes, and opens issues for owners.", []string{"data", "quality", "monitoring", "pipelines"}, []string{"Check yesterday's orders table for anomalies."}, []string{"application/json"}, []string{"application/json"}},
	}},
}

// card is the v1 shape of a generated card. It never holds a default value
// outside REQUIRED fields (no false, no empty list), so its RFC 8785 form
// equals the spec's presence-pruned canonical form (docs/verification.md).
type card struct {
	Name                string         `json:"name"`
	Description         string         `json:"description"`
	SupportedInterfaces []iface        `json:"supportedInterfaces"`
	Provider            provider       `json:"provider"`
	Version             string         `json:"version"`
	DocumentationURL    string         `json:"documentationUrl,omitempty"`
	Capabilities        map[string]any `json:"capabilities"`
	DefaultInputModes   []string       `json:"defaultInputModes"`
	DefaultOutputModes  []string       `json:"defaultOutputModes"`
	Skills              []skill        `json:"skills"`
}

type iface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

type provider struct {
	Organization string `json:"organization"`
	URL          string `json:"url"`
}

type skill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples,omitempty"`
	InputModes  []string `json:"inputModes,omitempty"`
	OutputModes []string `json:"outputModes,omitempty"`
}

// GenerateCard returns a realistic v1 card for agent n served from origin,
// deterministic in n. version is the agent's own version string.
func GenerateCard(n int, origin, version string) []byte {
	r := rand.New(rand.NewPCG(uint64(n), 0x63617264))
	d := domains[r.IntN(len(domains))]
	org := orgs[r.IntN(len(orgs))]
	role := d.role[r.IntN(len(d.role))]
	c := card{
		Name:        fmt.Sprintf("%s %s %s", org, d.area, role),
		Description: fmt.Sprintf("%s agent of %s (#%d). It helps employees with %s work: %s", d.area, org, n, strings.ToLower(d.area), d.skills[0].description),
		SupportedInterfaces: []iface{
			{URL: origin + "/a2a/v1", ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"},
		},
		Provider:           provider{Organization: org, URL: "https://www." + slug(org) + ".example"},
		Version:            version,
		Capabilities:       map[string]any{"streaming": true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain", "application/json"},
	}
	if r.IntN(2) == 0 {
		c.SupportedInterfaces = append(c.SupportedInterfaces, iface{URL: origin + "/a2a/rest", ProtocolBinding: "HTTP+JSON", ProtocolVersion: "1.0"})
		c.Capabilities["pushNotifications"] = true
	}
	if r.IntN(3) == 0 {
		c.DocumentationURL = "https://docs." + slug(org) + ".example/agents/" + slug(d.area)
	}
	count := 1 + r.IntN(len(d.skills))
	for _, i := range r.Perm(len(d.skills))[:count] {
		t := d.skills[i]
		c.Skills = append(c.Skills, skill{ID: t.id, Name: t.name, Description: t.description, Tags: t.tags,
			Examples: t.examples, InputModes: t.in, OutputModes: t.out})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		panic(err) // a fixed struct of strings always encodes
	}
	return buf.Bytes()
}

func slug(s string) string {
	s = strings.ToLower(s)
	s = strings.NewReplacer(" ", "-", "'", "").Replace(s)
	return s
}
