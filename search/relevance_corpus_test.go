package search

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
)

// realCards are published cards copied from shared/testdata/cards (names
// kept), keyed by the agent id the relevance queries use.
var realCards = map[string]string{
	"route-planner": "A2A_v1.0.0_docs_specification.md_8.5-sample-agent-card.json",
	"invoice-aiar":  "A2A_pr1592_examples_aiar-identity_agent-card.signed.json",
	"raydium-lp":    "A2A_pr300_samples_python_agents_autogen_lp_.well-known_agent.json",
	"air-ticketing": "a2a-samples_samples_python_agents_a2a_mcp_agent_cards_air_ticketing_agent.json",
	"car-rental":    "a2a-samples_samples_python_agents_a2a_mcp_agent_cards_car_rental_agent.json",
	"hotel-booking": "a2a-samples_samples_python_agents_a2a_mcp_agent_cards_hotel_booking_agent.json",
	"orchestrator":  "a2a-samples_samples_python_agents_a2a_mcp_agent_cards_orchestrator_agent.json",
	"planner":       "a2a-samples_samples_python_agents_a2a_mcp_agent_cards_planner_agent.json",
	"currency":      "a2a-samples_samples_python_agents_adk_currency_agent_src_currency_agent_agent_card.json",
	"narrativeos":   "wild_0xYuvi_NarrativeOS_.well-known_agent-card.json_SIGNED-EdDSA.json",
	"buywhere":      "wild_BuyWhere_buywhere_public_.well-known_agent-card.json",
	"toolroute":     "wild_Instabidsai_toolroute_public_.well-known_agent-card.json",
	"laisky-blog":   "wild_Laisky_laisky-blog_public_.well-known_agent-card.json",
}

// handCard is a hand-written card in the same normalized form Parse gives.
type handCard struct {
	id, name, desc, provider string
	skills                   []agentcard.Skill
}

func sk(id, name, desc string, tags []string, examples ...string) agentcard.Skill {
	return agentcard.Skill{ID: id, Name: name, Description: desc, Tags: tags, Examples: examples}
}

func tg(t ...string) []string { return t }

// handCards are realistic agents of the domains Cardex users search:
// finance, travel, code, data, support, health, legal, media, HR.
var handCards = []handCard{
	{"ledgerly", "Ledgerly Accounts Payable", "Automates accounts payable for mid-size companies.", "Ledgerly Inc.", []agentcard.Skill{
		sk("ap-invoices", "Invoice capture", "Extracts vendor, totals and line items from supplier invoices (PDF, scans) and matches them to purchase orders.", tg("finance", "invoices", "accounts-payable"), "Process this invoice from ACME"),
		sk("ap-approvals", "Approval routing", "Routes bills to the right approver based on amount and cost center.", tg("workflow", "approvals"))}},
	{"expense-buddy", "Expense Buddy", "Employee expense reports from receipts.", "Spendwise", []agentcard.Skill{
		sk("receipts", "Receipt scanning", "Reads receipts and creates expense report lines with category and VAT.", tg("finance", "expenses", "receipts")),
		sk("policy", "Expense policy check", "Flags expenses that break the travel and expense policy.", tg("compliance", "expenses"))}},
	{"taxwise", "TaxWise", "Sales tax and VAT calculation for online stores.", "TaxWise GmbH", []agentcard.Skill{
		sk("vat", "VAT calculation", "Computes VAT and sales tax rates by jurisdiction for each order line.", tg("finance", "tax", "vat")),
		sk("filing", "Tax filing reminders", "Reminds you of upcoming tax filing deadlines.", tg("tax", "calendar"))}},
	{"fx-desk", "FX Desk", "Foreign exchange quotes and hedging suggestions for treasury teams.", "Northwind Treasury", []agentcard.Skill{
		sk("fx-quote", "Exchange rate quote", "Live exchange rates between currencies, with historical charts.", tg("finance", "currency", "fx")),
		sk("hedge", "Hedging advice", "Suggests forward contracts to hedge currency exposure.", tg("finance", "risk"))}},
	{"fraud-sentinel", "Fraud Sentinel", "Real-time card payment fraud scoring.", "Sentinel Labs", []agentcard.Skill{
		sk("score", "Transaction risk scoring", "Scores card transactions for fraud risk using device and velocity signals.", tg("payments", "fraud", "risk")),
		sk("chargeback", "Chargeback disputes", "Prepares evidence packets for chargeback disputes.", tg("payments", "disputes"))}},
	{"flight-scout", "Flight Scout", "Finds cheap flights and fare alerts.", "Scout Travel", []agentcard.Skill{
		sk("fares", "Fare search", "Searches airline fares across carriers for flexible dates.", tg("travel", "flights", "airfare"), "cheapest flight from Paris to Tokyo in May"),
		sk("alerts", "Price alerts", "Watches a route and alerts when the fare drops.", tg("travel", "alerts"))}},
	{"trip-concierge", "Trip Concierge", "Plans complete trips: itineraries, hotels, restaurants and local transport.", "Concierge AI", []agentcard.Skill{
		sk("itinerary", "Itinerary planning", "Builds a day-by-day travel itinerary with sights and restaurants.", tg("travel", "itinerary", "planning")),
		sk("visa", "Visa requirements", "Explains passport and visa requirements for a destination.", tg("travel", "visa", "immigration"))}},
	{"code-reviewer", "Code Reviewer", "Reviews pull requests and suggests fixes.", "DevTools Co", []agentcard.Skill{
		sk("pr-review", "Pull request review", "Reviews diffs in GitHub pull requests for bugs, style and security issues.", tg("code", "review", "github"), "review PR #42"),
		sk("tests", "Unit test generation", "Writes unit tests for Go, Python and TypeScript functions.", tg("code", "testing"))}},
	{"sql-pilot", "SQL Pilot", "Ask questions about your data in plain English.", "Datawise", []agentcard.Skill{
		sk("text2sql", "Natural language to SQL", "Translates questions into SQL queries for PostgreSQL, MySQL and BigQuery and runs them.", tg("data", "sql", "analytics"), "how many orders last week?"),
		sk("charts", "Chart builder", "Turns query results into bar and line charts.", tg("data", "visualization", "charts"))}},
	{"etl-runner", "Pipeline Runner", "Schedules and monitors data pipelines.", "Datawise", []agentcard.Skill{
		sk("etl", "ETL jobs", "Extract, transform and load jobs between warehouses and SaaS apps.", tg("data", "etl", "pipelines")),
		sk("quality", "Data quality checks", "Detects schema drift, null spikes and duplicate rows.", tg("data", "quality"))}},
	{"helpdesk-hero", "Helpdesk Hero", "Tier-1 customer support agent for SaaS products.", "SupportCo", []agentcard.Skill{
		sk("tickets", "Ticket triage", "Classifies support tickets by urgency and routes them to the right team.", tg("support", "tickets", "triage")),
		sk("kb", "Knowledge base answers", "Answers customer questions from the help center articles.", tg("support", "faq"))}},
	{"refund-bot", "Refund Assistant", "Handles e-commerce returns and refunds.", "ShopOps", []agentcard.Skill{
		sk("returns", "Return requests", "Creates return labels and tracks returned parcels.", tg("ecommerce", "returns", "support")),
		sk("refunds", "Refund processing", "Issues refunds to the original payment method after inspection.", tg("payments", "refunds"))}},
	{"med-scheduler", "Clinic Scheduler", "Books and reschedules patient appointments for clinics.", "CareFlow", []agentcard.Skill{
		sk("appointments", "Appointment booking", "Books, moves and cancels doctor appointments and sends reminders.", tg("health", "scheduling", "appointments")),
		sk("intake", "Patient intake forms", "Collects patient history before the visit.", tg("health", "forms"))}},
	{"symptom-guide", "Symptom Guide", "Symptom checker with triage advice; not a diagnosis.", "CareFlow", []agentcard.Skill{
		sk("symptoms", "Symptom checker", "Asks about symptoms and suggests whether to see a doctor, urgent care or rest.", tg("health", "triage", "symptoms"))}},
	{"contract-lens", "Contract Lens", "Reviews legal contracts and highlights risky clauses.", "LexAI", []agentcard.Skill{
		sk("nda", "NDA review", "Reviews non-disclosure agreements against your playbook.", tg("legal", "contracts", "nda")),
		sk("clauses", "Clause extraction", "Extracts termination, liability and renewal clauses from contracts.", tg("legal", "extraction"))}},
	{"gdpr-guard", "GDPR Guard", "Privacy compliance assistant.", "LexAI", []agentcard.Skill{
		sk("dsar", "Data subject requests", "Handles GDPR data subject access and deletion requests.", tg("legal", "privacy", "gdpr")),
		sk("dpia", "Impact assessments", "Drafts data protection impact assessments.", tg("privacy", "compliance"))}},
	{"podcast-studio", "Podcast Studio", "Edits and publishes podcast episodes.", "MediaForge", []agentcard.Skill{
		sk("transcribe", "Audio transcription", "Transcribes audio recordings into text with speaker labels.", tg("media", "audio", "transcription")),
		sk("shownotes", "Show notes", "Writes show notes and chapter markers from a transcript.", tg("media", "writing"))}},
	{"video-cutter", "Video Cutter", "Turns long videos into short social clips.", "MediaForge", []agentcard.Skill{
		sk("clips", "Clip generation", "Finds highlights in a video and exports vertical clips with subtitles.", tg("media", "video", "social")),
		sk("subtitles", "Subtitles", "Generates and translates subtitles for videos.", tg("media", "translation"))}},
	{"translate-pro", "Translate Pro", "Document translation in 40 languages.", "Polyglot Ltd", []agentcard.Skill{
		sk("docs", "Document translation", "Translates Word and PDF documents keeping the layout.", tg("translation", "documents", "languages")),
		sk("glossary", "Glossary management", "Keeps terminology consistent with a company glossary.", tg("translation"))}},
	{"recruit-ai", "Recruit AI", "Screens candidates and schedules interviews.", "TalentOps", []agentcard.Skill{
		sk("screening", "Resume screening", "Ranks resumes against a job description.", tg("hr", "recruiting", "resumes")),
		sk("interviews", "Interview scheduling", "Schedules interviews across calendars and time zones.", tg("hr", "scheduling"))}},
	{"payroll-pal", "Payroll Pal", "Runs payroll and answers payslip questions.", "TalentOps", []agentcard.Skill{
		sk("payroll", "Payroll run", "Calculates salaries, withholding and pension contributions each month.", tg("hr", "payroll", "finance")),
		sk("payslips", "Payslip questions", "Explains payslip lines to employees.", tg("hr", "support"))}},
	{"weather-now", "Weather Now", "Weather forecasts and severe weather alerts.", "SkyData", []agentcard.Skill{
		sk("forecast", "Forecast", "Hourly and 10-day weather forecast for any city.", tg("weather", "forecast")),
		sk("storms", "Storm alerts", "Alerts on storms, floods and heat waves near a location.", tg("weather", "alerts"))}},
	{"recipe-chef", "Recipe Chef", "Suggests recipes from what is in your fridge.", "KitchenLab", []agentcard.Skill{
		sk("recipes", "Recipe suggestions", "Suggests recipes from ingredients, diet and cooking time.", tg("food", "recipes", "cooking")),
		sk("shopping", "Shopping list", "Builds a grocery shopping list for a weekly meal plan.", tg("food", "groceries"))}},
	{"sec-scanner", "Security Scanner", "Finds vulnerabilities in dependencies and containers.", "ShieldOps", []agentcard.Skill{
		sk("deps", "Dependency audit", "Scans dependencies for known CVEs and suggests upgrades.", tg("security", "code", "vulnerabilities")),
		sk("containers", "Container scan", "Scans Docker images for vulnerable packages and secrets.", tg("security", "containers"))}},
	{"incident-commander", "Incident Commander", "Coordinates production incidents.", "ShieldOps", []agentcard.Skill{
		sk("pager", "On-call paging", "Pages the on-call engineer and opens an incident channel.", tg("devops", "incidents", "on-call")),
		sk("postmortem", "Postmortem drafts", "Drafts a postmortem timeline from chat and alerts.", tg("devops", "writing"))}},
	{"crm-scribe", "CRM Scribe", "Keeps the CRM up to date after sales calls.", "SalesLoop", []agentcard.Skill{
		sk("notes", "Call notes", "Summarizes sales calls and logs next steps in Salesforce.", tg("sales", "crm", "summarization")),
		sk("leads", "Lead enrichment", "Enriches leads with company size, industry and contacts.", tg("sales", "leads"))}},
	{"newsletter-writer", "Newsletter Writer", "Drafts marketing newsletters and social posts.", "Copyhaus", []agentcard.Skill{
		sk("newsletter", "Newsletter drafting", "Writes email newsletters in your brand voice.", tg("marketing", "writing", "email")),
		sk("seo", "SEO keywords", "Suggests keywords and meta descriptions for blog posts.", tg("marketing", "seo"))}},
	// Worded so that a user's words differ from the card's: accents,
	// compounds, paraphrases, synonyms.
	{"cafe-finder", "Café Finder", "Finds cafés, bakeries and coffee shops near you.", "Brûlerie Labs", []agentcard.Skill{
		sk("nearby", "Nearby cafés", "Lists cafés open now around a location with ratings.", tg("food", "places"))}},
	{"review-insights", "Review Insights", "Understands what customers say in product reviews.", "Insightful", []agentcard.Skill{
		sk("sentiment", "Analyze sentiment", "Analyzes the sentiment of customer reviews and support chats, positive to negative.", tg("nlp", "customer-feedback")),
		sk("topics", "Topic clustering", "Groups reviews by the topics customers mention.", tg("nlp", "clustering"))}},
	{"secret-sweeper", "Secret Sweeper", "Keeps secrets out of source code.", "ShieldOps", []agentcard.Skill{
		sk("scan", "Secret detection", "Scans git repos and commit history for exposed API keys, tokens and passwords.", tg("security", "devsecops"),
			"check my GitHub org for exposed keys")}},
	{"voice-studio", "VoiceStudio", "Natural voices for apps and videos.", "Sonic", []agentcard.Skill{
		sk("tts", "TextToSpeech", "Turns scripts into natural audio in 30 voices.", tg("tts", "audio"))}},
}

// relevanceAgents loads the fixed corpus: the published cards through the
// real parser, then the hand-written ones.
func relevanceAgents(t testing.TB) []registry.Agent {
	t.Helper()
	var out []registry.Agent
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for id, file := range realCards {
		b, err := os.ReadFile(filepath.Join("testdata", "cards", file))
		if err != nil {
			t.Fatal(err)
		}
		p, err := agentcard.Parse(b, agentcard.Options{})
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		a := testAgent(id, "", "")
		a.Card = p.Card
		out = append(out, a)
	}
	for i, h := range handCards {
		a := testAgent(h.id, h.name, h.desc, h.skills...)
		a.Card.Provider = &agentcard.Provider{Organization: h.provider, URL: "https://" + strings.ReplaceAll(strings.ToLower(h.provider), " ", "") + ".example"}
		a.UpdatedAt = base.Add(time.Duration(i) * time.Hour)
		out = append(out, a)
	}
	return out
}
