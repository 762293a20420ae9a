package corpus

// domain is one field of business the generated agents come from: its
// nouns, verbs and tags, ranked roughly by how often real cards use them.
type domain struct {
	name  string
	nouns []string
	verbs []string
	tags  []string
}

var domains = []domain{
	{"finance",
		w("invoice payment ledger account budget forecast expense receipt tax vat payroll transaction bank loan credit debit refund revenue cashflow audit reconciliation portfolio stock bond dividend interest mortgage insurance premium claim fraud chargeback treasury currency exchange hedge wallet crypto token defi liquidity pool yield statement balance subscription billing pricing quote"),
		w("reconcile forecast categorize approve pay invoice audit hedge convert calculate estimate report flag detect score settle"),
		w("finance accounting payments billing tax invoices expenses banking crypto defi fintech insurance treasury fraud risk compliance"),
	},
	{"travel",
		w("flight hotel booking itinerary trip destination airport airline fare ticket visa passport luggage car rental train route city beach resort tour guide reservation check-in boarding seat lounge cruise hostel apartment museum restaurant layover connection timetable"),
		w("book search plan compare reserve cancel rebook track recommend explore navigate"),
		w("travel flights hotels booking itinerary tourism transport maps navigation rail visa"),
	},
	{"code",
		w("repository commit branch pull-request review diff bug test build pipeline deployment container kubernetes cluster function library dependency package module api endpoint schema migration refactor lint coverage release changelog issue ticket terraform infrastructure log trace metric"),
		w("review refactor test deploy build lint debug scaffold migrate generate explain fix document profile"),
		w("code devops github ci testing security kubernetes cloud infrastructure observability python golang typescript"),
	},
	{"data",
		w("dataset table query sql warehouse pipeline etl dashboard chart report metric kpi anomaly forecast model feature column row schema spreadsheet csv parquet notebook cohort funnel segment experiment survey"),
		w("query aggregate visualize clean transform join forecast cluster classify summarize export import analyze"),
		w("data analytics sql etl bi visualization machine-learning statistics spreadsheets reporting"),
	},
	{"support",
		w("ticket customer complaint question answer faq article knowledge chat conversation escalation agent sla priority feedback survey refund return order shipment delivery warranty"),
		w("answer triage route escalate resolve summarize translate tag reply follow-up"),
		w("support helpdesk customer-service faq chat tickets crm ecommerce returns"),
	},
	{"health",
		w("patient appointment doctor clinic symptom diagnosis prescription medication dose allergy lab result record insurance claim therapy nutrition fitness sleep heart blood pressure glucose vaccine referral"),
		w("schedule remind triage check track monitor explain refill record"),
		w("health healthcare medical clinic pharmacy fitness nutrition wellness telehealth"),
	},
	{"legal",
		w("contract clause agreement nda lease policy regulation compliance privacy gdpr consent court case filing patent trademark license liability termination signature evidence"),
		w("review draft redline extract compare summarize file sign"),
		w("legal contracts compliance privacy gdpr ip litigation regulatory"),
	},
	{"media",
		w("video audio podcast episode transcript subtitle image photo thumbnail clip music playlist article headline newsletter blog post caption story script voice"),
		w("transcribe edit caption translate generate publish summarize dub resize tag"),
		w("media video audio podcasts images content writing social-media music"),
	},
	{"hr",
		w("candidate resume interview job offer onboarding employee payroll leave vacation benefit review goal training course skill team manager salary timesheet"),
		w("screen schedule onboard evaluate approve train match"),
		w("hr recruiting onboarding payroll learning people-ops"),
	},
	{"sales",
		w("lead prospect deal pipeline opportunity account contact call meeting email campaign quota forecast proposal crm territory renewal churn"),
		w("qualify enrich prioritize draft follow-up log forecast"),
		w("sales crm marketing leads email outreach revenue-ops"),
	},
	{"ops",
		w("incident alert outage server uptime latency error log on-call runbook postmortem backup restore certificate dns firewall vulnerability patch inventory shipment warehouse supplier order"),
		w("monitor alert page restore patch scan rotate reorder"),
		w("operations devops security monitoring logistics supply-chain inventory"),
	},
	{"home",
		w("recipe ingredient meal grocery weather forecast storm garden plant energy thermostat light calendar reminder event birthday movie book game"),
		w("suggest cook plan remind control recommend"),
		w("food recipes weather smart-home calendar entertainment lifestyle"),
	},
}

// general are words any description may use.
var general = w(`fast secure reliable automatic smart simple enterprise team company small business
user customer people daily weekly monthly realtime live instant natural language multilingual
english spanish french german japanese global local private public open free premium support
help assistant agent service tool platform integration workflow process task request response
document file pdf email message chat voice phone text image web mobile app dashboard report
summary list detail record history status update change new old best top recommended
accurate precise context memory knowledge search find match filter sort group compare rank`)

var brandParts = w("nova acme blue bright cloud swift north apex quant zen orbit pixel lumen vertex delta echo atlas terra nimbus sol luna aero astra cobalt crimson ember fable flux grove harbor iris jade kite lark maple nexus onyx pine quill raven sage tidal umbra vivid willow xeno yarrow zephyr")
var brandSuffix = w("ly io ify hub lab labs works desk pilot mind bot ai flow stack base wise path point")
var agentWords = w("Agent Assistant Copilot Bot Helper Desk Pilot Advisor Concierge Scout")

var (
	modesIn  = w("text/plain application/json image/png image/jpeg application/pdf audio/mpeg text/csv video/mp4 text/markdown audio/wav")
	modesOut = w("text/plain application/json text/markdown image/png application/pdf text/csv audio/mpeg text/html")
	bindings = w("JSONRPC HTTP+JSON GRPC")
	schemes  = w("apiKey http oauth2 openIdConnect mutualTls")
	versions = w("1.0 0.3 0.2")
)

// extensionURIs are the extensions generated agents declare, Zipf-ranked.
var extensionURIs = func() []string {
	base := w("traceability timestamps secure-passport agent-identity payments ap2 citations memory artifacts-v2 sampling billing usage quotas handoff voice streaming-audio ui-hints forms files geo sla audit-log consent pricing marketplace ratings sandbox webhook batch human-in-the-loop")
	out := make([]string, 0, len(base))
	for _, b := range base {
		out = append(out, "https://a2a.example.org/extensions/"+b+"/v1")
	}
	return out
}()
