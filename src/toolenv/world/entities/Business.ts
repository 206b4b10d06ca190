/**
 * Business and finance: companies and their stock, funds, crypto assets and exchanges, banks, payments,
 * invoices, employees, projects, support tickets, ad campaigns, job postings and coupons.
 */
import { hash32 } from "../../../math/Random.ts"
import * as D from "../Dsl.ts"
import type { EntityCore, EntityDef } from "../Model.ts"
import * as V from "../Values.ts"
import * as W from "../Words.ts"

const hqCity = D.ref("headquarters_city_id", "headquarters city ID", "city", { inverse: "companies", inverseLabel: "companies headquartered there" })

/** Companies. */
export const company: EntityDef = {
  type: "company", noun: "company", plural: "companies", synonyms: ["business", "firm", "corporation", "organization", "enterprise"], nameLabel: "name",
  size: 4000,
  id: D.numbered("CMP-", 6, "company ID"),
  name: (e, attempt) => V.companyName(D.draw(e, attempt, "name")),
  uniqueNames: true,
  attrs: [
    D.cat("industry", "industry", W.industries),
    D.count("founded", "founding year", 1850, 2022),
    D.logCount("employees", "number of employees", 5, 400_000),
    hqCity,
    D.refName("headquarters", "headquarters city", hqCity),
    D.str("ceo", "CEO", (e) => V.personName(e.h("ceo"))),
    D.money("revenue_usd", "annual revenue", 200_000, 400_000_000_000, "USD"),
    D.str("website", "website", (e) => `https://www.${V.domainFor(e.name, e.h("dom"))}`, { format: "uri" }),
    D.str("ticker", "stock ticker", (e) => {
      const c = e.world.children("stock", e.index)
      return c.count === 0 ? "N/A" : e.world.id("stock", c.start)
    }),
    D.bool("is_public", "whether it is publicly traded", (e) => e.world.children("stock", e.index).count > 0),
    D.childCount("employee_records", "employees on record", "employee")
  ]
}

const priceBase = (e: EntityCore): number => V.logUniform(e.h("price"), 2, 900)

/** Listed stocks: one per public company, tickers from the company name. */
export const stock: EntityDef = {
  type: "stock", noun: "stock", plural: "stocks", synonyms: ["share", "equity", "ticker", "security", "listed company"], nameLabel: "company name",
  size: 0,
  parent: { type: "company", key: "company_id", label: "company", min: 0, max: 1, relation: "stock" },
  id: D.lettersFromName(4, "ticker symbol", "AAPL", 2),
  name: (e) => e.world.name("company", e.parent),
  attrs: [
    D.parentId("company_id", "company ID", "company"),
    D.cat("exchange", "stock exchange", W.stockExchanges),
    D.cat("sector", "sector", W.sectors),
    D.str("currency", "trading currency", (e) => {
      const ex = V.pick(W.stockExchanges, e.h("exchange"))
      return ({ LSE: "GBP", TSE: "JPY", Euronext: "EUR", HKEX: "HKD", TSX: "CAD", ASX: "AUD", SIX: "CHF", BSE: "INR" } as Record<string, string>)[ex] ?? "USD"
    }),
    D.num("price", "last price", (e) => seriesAt(e, "close", V.today), { filter: "range" }),
    D.logCount("shares_outstanding", "shares outstanding", 5_000_000, 16_000_000_000),
    D.num("market_cap", "market capitalisation", (e) => Math.round(seriesAt(e, "close", V.today) * (e.get("shares_outstanding") as number)), { filter: "range" }),
    D.measure("pe_ratio", "P/E ratio", 4, 85, 1),
    D.measure("dividend_yield_pct", "dividend yield (%)", 0, 7.5, 2, { unit: "%" }),
    D.num("week52_high", "52-week high", (e) => Math.round(priceBase(e) * 1.35 * 100) / 100),
    D.num("week52_low", "52-week low", (e) => Math.round(priceBase(e) * 0.62 * 100) / 100),
    D.measure("beta", "beta", 0.3, 2.2, 2),
    D.date("ipo_date", "IPO date", (e) => V.pastDate(e.h("ipo"), 400, 16000))
  ],
  series: [
    D.around("close", "closing price", priceBase, 0.22, 2),
    D.around("volume", "trading volume", (e) => V.logUniform(e.h("vol"), 20_000, 60_000_000), 0.5, 0)
  ]
}

const seriesAt = (e: EntityCore, key: string, day: number): number => {
  const s = stock.series?.find((x) => x.key === key)
  return s === undefined ? 0 : s.value(e, day, e.h(`series/${key}`))
}

/** Exchange-traded funds holding stocks. */
export const fund: EntityDef = {
  type: "fund", noun: "fund", plural: "funds", synonyms: ["ETF", "exchange-traded fund", "index fund"], nameLabel: "name",
  size: 600,
  id: D.lettersFromName(4, "fund ticker", "VTI", 3),
  name: (e) => `${V.compound(e.h("brand"))} ${V.pick(["Global", "US", "Emerging Markets", "Europe", "Asia Pacific", "Total Market", "Small Cap", "Dividend", "Clean Energy", "Technology", "Healthcare", "Bond"], e.h("focus"))} ${V.pick(["ETF", "Index Fund", "Growth ETF", "Value ETF"], e.h("k"))}`,
  attrs: [
    D.str("issuer", "issuer", (e) => V.companyName(e.h("issuer"))),
    D.cat("asset_class", "asset class", ["equity", "fixed income", "commodity", "multi-asset", "real estate"]),
    D.measure("expense_ratio_pct", "expense ratio (%)", 0.03, 0.95, 2, { unit: "%" }),
    D.money("aum_usd", "assets under management", 5_000_000, 300_000_000_000, "USD"),
    D.date("inception", "inception date", (e) => V.pastDate(e.h("inc"), 300, 11000)),
    D.refs("holdings", "top holdings (tickers)", "stock", 5, 10),
    D.measure("ytd_return_pct", "year-to-date return (%)", -18, 32, 2, { unit: "%" })
  ],
  series: [D.around("nav", "net asset value", (e) => V.logUniform(e.h("nav"), 8, 600), 0.12, 2)]
}

/** Crypto assets: rank follows market cap by construction (index 0 is the largest). */
export const crypto: EntityDef = {
  type: "crypto", noun: "cryptocurrency", plural: "cryptocurrencies", synonyms: ["coin", "token", "crypto asset", "digital currency"], nameLabel: "name",
  size: 900,
  id: D.lettersFromName(4, "coin symbol", "BTC", 3),
  name: (e) => `${V.coined(e.h("name"))}${V.pick(["", "coin", " Token", " Chain", " Network", " Protocol", " Finance"], e.h("k"))}`,
  attrs: [
    D.int("rank", "market-cap rank", (e) => e.index + 1, { filter: "range" }),
    D.num("price_usd", "price in US dollars", (e) => cryptoPrice(e, V.today), { filter: "range", unit: "USD" }),
    D.num("market_cap_usd", "market capitalisation", (e) => Math.round(1.3e12 / (e.index + 1) ** 1.35), { filter: "range", unit: "USD" }),
    D.num("circulating_supply", "circulating supply", (e) => Math.round(1.3e12 / (e.index + 1) ** 1.35 / Math.max(cryptoBase(e), 1e-6))),
    D.count("launched", "launch year", 2009, 2024),
    D.cat("consensus", "consensus mechanism", ["proof of work", "proof of stake", "delegated proof of stake", "proof of history", "none (token)"]),
    D.measure("change_24h_pct", "24-hour change (%)", -14, 14, 2, { unit: "%" }),
    D.str("website", "website", (e) => `https://${V.domainFor(e.name, e.h("dom"))}`, { format: "uri", fact: false })
  ],
  series: [{ key: "price_usd", label: "price in US dollars", unit: "USD", type: "number", value: (e, day) => cryptoPrice(e, day) }]
}

const cryptoBase = (e: EntityCore): number => V.logUniform(e.h("base"), 0.0004, 60000) / (1 + e.index / 50)
const cryptoPrice = (e: EntityCore, day: number): number => {
  const p = cryptoBase(e) * (1 + 0.35 * D.wave(e.h("series/price_usd"), day))
  return p >= 1 ? Math.round(p * 100) / 100 : Number(p.toPrecision(4))
}

/** Crypto exchanges. */
export const cryptoExchange: EntityDef = {
  type: "crypto_exchange", noun: "crypto exchange", plural: "crypto exchanges", synonyms: ["exchange", "trading platform", "crypto marketplace"], nameLabel: "name",
  size: 150,
  id: { label: "exchange slug", example: "bluepeak-exchange", make: (e, attempt) => attempt === 0 ? V.slug(e.name) : `${V.slug(e.name)}-${attempt + 1}` },
  name: (e) => `${e.h("s") % 2 === 0 ? V.compound(e.h("c")) : V.coined(e.h("k"))} ${V.pick(["Exchange", "X", "Markets", "Trade", "Pro"], e.h("t"))}`,
  attrs: [
    D.ref("country_code", "country code", "country"),
    D.count("founded", "founding year", 2011, 2023),
    D.money("volume_24h_usd", "24-hour volume", 1_000_000, 40_000_000_000, "USD"),
    D.count("pairs", "trading pairs", 20, 1800),
    D.count("trust_score", "trust score (1-10)", 1, 10),
    D.measure("taker_fee_pct", "taker fee (%)", 0.02, 0.6, 2, { unit: "%" })
  ]
}

const bankCountry = D.ref("country_code", "country code", "country", { inverse: "banks", inverseLabel: "banks" })

/** Banks with SWIFT/BIC codes. */
export const bank: EntityDef = {
  type: "bank", noun: "bank", plural: "banks", synonyms: ["lender", "financial institution", "credit union"], nameLabel: "name",
  size: 1500,
  id: {
    label: "SWIFT/BIC code", example: "DEUTDEFF",
    make: (e, attempt) => {
      const cc = e.world.id("country", bankCountry.ref?.index(e) ?? 0)
      const head = (V.slug(e.name, "").toUpperCase().replace(/[^A-Z]/g, "") + "XXXX").slice(0, 4)
      const h = hash32(`bic${attempt}`, e.hash)
      return `${attempt === 0 ? head : head.slice(0, 2) + V.letters(h, 2)}${cc}${V.chars(V.sub(h, "l"), 2, "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789")}`
    }
  },
  name: (e) => {
    switch (e.h("style") % 4) {
      case 0: return `${V.compound(e.h("c"))} Bank`
      case 1: return `Bank of ${V.placeName(e.h("p"))}`
      case 2: return `${V.pick(W.lastNames, e.h("n"))} & ${V.pick(W.lastNames, e.h("m"))} Bank`
      default: return `${V.placeName(e.h("p"))} Savings ${V.pick(["Bank", "Union", "& Trust"], e.h("k"))}`
    }
  },
  attrs: [
    bankCountry,
    D.refName("country", "country", bankCountry),
    D.count("founded", "founding year", 1780, 2021),
    D.money("total_assets_usd", "total assets", 50_000_000, 3_500_000_000_000, "USD"),
    D.count("branches", "number of branches", 1, 4500),
    D.cat("credit_rating", "credit rating", ["AAA", "AA+", "AA", "AA-", "A+", "A", "A-", "BBB+", "BBB", "BB"]),
    D.measure("savings_rate_pct", "savings interest rate (%)", 0.1, 5.4, 2, { unit: "%" })
  ]
}

const paymentCustomer = D.ref("customer_id", "customer ID", "user", { inverse: "payments", inverseLabel: "payments" })

/** Card and wallet payments. */
export const payment: EntityDef = {
  type: "payment", noun: "payment", plural: "payments", synonyms: ["charge", "transaction", "payment intent"], nameLabel: "description",
  size: 8000,
  id: D.coded("pay_", 14, "base64", "payment ID", "pay_3Jk9xQ2mZ7aB1c"),
  name: (e) => `${V.pick(["Subscription", "Order", "Invoice", "Top-up", "Donation", "Booking"], e.h("d"))} ${V.int(e.h("n"), 1000, 99999)}`,
  searchable: false,
  attrs: [
    D.money("amount", "amount", 1, 5000, undefined),
    D.ref("currency", "currency", "currency", { index: (e) => e.h("cur") % 4 }),
    D.cat("status", "status", W.paymentStatuses),
    paymentCustomer,
    D.refName("customer", "customer name", paymentCustomer),
    D.cat("method", "payment method", ["card", "bank_transfer", "wallet", "sepa_debit", "ach"]),
    D.dateTime("created_at", "creation time", (e) => V.dateTimeOn(e.h("at"), V.today - V.int(e.h("ago"), 0, 120))),
    D.num("fee", "processing fee", (e) => Math.round((V.amount(e.h("amount"), 1, 5000) * 0.029 + 0.3) * 100) / 100)
  ],
  actions: [{
    key: "refund", label: "refund a payment", creates: "refund",
    recordId: (h) => `re_${V.base64(h, 14)}`,
    inputs: [
      { key: "reason", label: "refund reason", type: "string", values: ["duplicate", "fraudulent", "requested_by_customer"], required: false, example: () => "requested_by_customer" }
    ],
    compute: (p, args) => ({
      payment_id: p?.id ?? "",
      amount: p?.get("amount") ?? 0,
      currency: p?.get("currency") ?? "USD",
      reason: args["reason"] ?? "requested_by_customer",
      status: p?.get("status") === "succeeded" ? "succeeded" : "failed"
    }),
    recordAttrs: [
      { key: "payment_id", label: "payment ID", type: "string", ref: { type: "payment", index: () => -1 } },
      { key: "amount", label: "refunded amount", type: "number" },
      { key: "currency", label: "currency", type: "string" },
      { key: "reason", label: "reason", type: "string" },
      { key: "status", label: "refund status", type: "string" }
    ]
  }]
}

const invoiceCustomer = D.ref("customer_company_id", "customer company ID", "company", { inverse: "invoices", inverseLabel: "invoices" })

/** Invoices issued to companies. */
export const invoice: EntityDef = {
  type: "invoice", noun: "invoice", plural: "invoices", synonyms: ["bill", "statement"], nameLabel: "number",
  size: 6000,
  id: { label: "invoice number", example: "INV-2024-00412", make: (e, attempt) => `INV-${V.int(e.h("y"), 2022, 2024)}-${String(hash32(`inv${attempt}`, e.hash) % 100000).padStart(5, "0")}` },
  name: (e) => `Invoice ${V.int(e.h("n"), 1000, 9999)}`,
  searchable: false,
  attrs: [
    invoiceCustomer,
    D.refName("customer", "customer", invoiceCustomer),
    D.money("amount_due", "amount due", 50, 250000, "USD"),
    D.cat("status", "status", ["paid", "open", "overdue", "void"]),
    D.date("issued", "issue date", (e) => V.pastDate(e.h("iss"), 5, 300)),
    D.date("due", "due date", (e) => V.isoDate(V.dayNumber(V.pastDate(e.h("iss"), 5, 300)) + V.pick([15, 30, 45, 60], e.h("terms")))),
    D.count("line_items", "number of line items", 1, 25)
  ]
}

/** Employees of companies. */
export const employee: EntityDef = {
  type: "employee", noun: "employee", plural: "employees", synonyms: ["staff member", "team member", "worker", "colleague"], nameLabel: "name",
  size: 0,
  parent: { type: "company", key: "company_id", label: "company", min: 0, max: 6, relation: "employees" },
  id: D.numbered("EMP-", 6, "employee ID"),
  name: (e, attempt) => V.personName(D.draw(e, attempt, "name"), attempt >= 4),
  uniqueNames: true,
  attrs: [
    D.parentId("company_id", "company ID", "company"),
    D.parentName("company", "company", "company"),
    D.str("title", "job title", (e) => `${V.pick(W.seniorities, e.h("sen"))} ${V.pick(W.jobTitles, e.h("title"))}`),
    D.cat("department", "department", ["Engineering", "Sales", "Marketing", "Finance", "Operations", "Human Resources", "Legal", "Support", "Product", "Research"]),
    D.str("email", "work email", (e) => V.email(e.name, V.domainFor(e.world.name("company", e.parent), e.world.entity("company", e.parent).h("dom")), e.h("em")), { format: "email" }),
    D.date("hired", "hire date", (e) => V.pastDate(e.h("hired"), 10, 9000)),
    D.str("office", "office city", (e) => e.world.name("city", e.h("office") % e.world.size("city")))
  ]
}

const projectCompany = D.ref("company_id", "company ID", "company", { inverse: "projects", inverseLabel: "projects" })

/** Internal projects. */
export const project: EntityDef = {
  type: "project", noun: "project", plural: "projects", synonyms: ["initiative", "workstream", "program"], nameLabel: "name",
  size: 2000,
  id: D.numbered("PRJ-", 5, "project ID"),
  name: (e, attempt) => D.draw(e, attempt, "s") % 2 === 0 ? `Project ${V.pick(W.compoundHeads, D.draw(e, attempt, "h"))}` : `${V.coined(D.draw(e, attempt, "c"))} ${V.pick(["Migration", "Redesign", "Launch", "Rollout", "Upgrade", "Platform"], D.draw(e, attempt, "k"))}`,
  uniqueNames: true,
  attrs: [
    projectCompany,
    D.refName("company", "company", projectCompany),
    D.cat("status", "status", ["planned", "active", "on_hold", "completed", "cancelled"]),
    D.str("owner", "project owner", (e) => V.personName(e.h("owner"))),
    D.date("start_date", "start date", (e) => V.pastDate(e.h("start"), 10, 600)),
    D.date("due_date", "due date", (e) => V.futureDate(e.h("due"), 5, 400)),
    D.money("budget_usd", "budget", 5000, 4_000_000, "USD"),
    D.count("progress_pct", "progress (%)", 0, 100, { unit: "%" }),
    D.count("team_size", "team size", 2, 40)
  ]
}

const ticketProject = D.ref("project_id", "project ID", "project", { inverse: "tickets", inverseLabel: "tickets" })

/** Support tickets. */
export const ticket: EntityDef = {
  type: "ticket", noun: "support ticket", plural: "support tickets", synonyms: ["ticket", "issue", "case", "help desk request"], nameLabel: "subject",
  size: 8000,
  id: D.numbered("TCK-", 6, "ticket ID"),
  name: (e) => `${V.pick(["Cannot log in to", "Refund request for", "Error when exporting", "Question about", "Billing issue with", "Feature request:", "Slow loading of", "Password reset for"], e.h("s"))} ${V.pick(["dashboard", "invoice", "mobile app", "API key", "account", "report", "subscription", "order"], e.h("o"))}`,
  attrs: [
    D.cat("status", "status", W.ticketStatuses),
    D.cat("priority", "priority", W.priorities),
    D.dateTime("created_at", "creation time", (e) => V.dateTimeOn(e.h("at"), V.today - V.int(e.h("ago"), 0, 90))),
    D.str("requester", "requester", (e) => V.personName(e.h("req"))),
    D.str("assignee", "assignee", (e) => V.personName(e.h("asg"))),
    D.cat("channel", "channel", ["email", "chat", "phone", "web form"]),
    ticketProject
  ],
  actions: [{
    key: "comment", label: "add a comment to a support ticket", creates: "ticket_comment",
    recordId: (h) => `TC-${V.chars(h, 8, "0123456789")}`,
    inputs: [
      { key: "body", label: "comment text", type: "string", required: true, example: (h) => V.sentence(h, "Customer") },
      { key: "public", label: "visible to the requester", type: "boolean", required: false, example: () => true }
    ],
    compute: (t, args) => ({ ticket_id: t?.id ?? "", body: args["body"] ?? "", public: args["public"] ?? true, status: "added" }),
    recordAttrs: [
      { key: "ticket_id", label: "ticket ID", type: "string", ref: { type: "ticket", index: () => -1 } },
      { key: "body", label: "comment", type: "string" },
      { key: "public", label: "public", type: "boolean" },
      { key: "status", label: "status", type: "string" }
    ]
  }]
}

const campaignAdvertiser = D.ref("advertiser_id", "advertiser company ID", "company", { inverse: "campaigns", inverseLabel: "ad campaigns" })

/** Advertising campaigns. */
export const campaign: EntityDef = {
  type: "campaign", noun: "ad campaign", plural: "ad campaigns", synonyms: ["campaign", "advertising campaign", "promotion", "ad set"], nameLabel: "name",
  size: 3000,
  id: D.coded("cmp_", 10, "alnum", "campaign ID", "cmp_0x8k2n4b7q"),
  name: (e) => `${V.pick(["Spring", "Summer", "Autumn", "Winter", "Holiday", "Back to School", "Black Friday", "Launch"], e.h("season"))} ${V.pick(W.productNouns, e.h("p"))} ${V.pick(["Promo", "Sale", "Launch", "Awareness", "Retargeting"], e.h("k"))}`,
  attrs: [
    campaignAdvertiser,
    D.refName("advertiser", "advertiser", campaignAdvertiser),
    D.cat("channel", "channel", ["search", "social", "display", "video", "email", "native"]),
    D.money("budget_usd", "budget", 500, 2_000_000, "USD"),
    D.num("spent_usd", "amount spent", (e) => Math.round(V.amount(e.h("budget_usd"), 500, 2_000_000) * V.float(e.h("spent"), 0.05, 1, 3) * 100) / 100, { filter: "range", unit: "USD" }),
    D.logCount("impressions", "impressions", 1000, 80_000_000),
    D.int("clicks", "clicks", (e) => Math.round(V.logInt(e.h("impressions"), 1000, 80_000_000) * V.float(e.h("ctr"), 0.002, 0.08, 4)), { filter: "range" }),
    D.num("ctr_pct", "click-through rate (%)", (e) => Math.round(V.float(e.h("ctr"), 0.002, 0.08, 4) * 10000) / 100, { unit: "%" }),
    D.date("start_date", "start date", (e) => V.pastDate(e.h("start"), 0, 200)),
    D.cat("status", "status", ["active", "paused", "completed", "draft"])
  ],
  series: [D.around("impressions", "daily impressions", (e) => V.logUniform(e.h("daily"), 100, 900_000), 0.45, 0)]
}

const jobCompany = D.ref("company_id", "company ID", "company", { inverse: "jobs", inverseLabel: "job openings" })
const jobCity = D.ref("city_id", "city ID", "city", { inverse: "jobs", inverseLabel: "job openings" })

/** Job postings. */
export const job: EntityDef = {
  type: "job", noun: "job posting", plural: "job postings", synonyms: ["job", "vacancy", "opening", "position", "role"], nameLabel: "title",
  size: 6000,
  id: D.numbered("JOB-", 7, "job ID"),
  name: (e) => `${V.pick(W.seniorities, e.h("sen"))} ${V.pick(W.jobTitles, e.h("title"))}`,
  attrs: [
    jobCompany,
    D.refName("company", "company", jobCompany),
    jobCity,
    D.refName("city", "city", jobCity),
    D.int("salary_min", "minimum salary", (e) => 1000 * V.int(e.h("sal"), 28, 180), { filter: "range", unit: "USD" }),
    D.int("salary_max", "maximum salary", (e) => 1000 * (V.int(e.h("sal"), 28, 180) + V.int(e.h("spread"), 5, 60)), { filter: "range", unit: "USD" }),
    D.cat("employment_type", "employment type", ["full-time", "part-time", "contract", "internship", "temporary"]),
    D.bool("remote", "remote allowed", (e) => V.chance(e.h("remote"), 0.4)),
    D.date("posted", "posting date", (e) => V.pastDate(e.h("posted"), 0, 60)),
    D.count("experience_years", "years of experience required", 0, 12),
    D.logCount("applicants", "number of applicants", 1, 2500)
  ],
  actions: [{
    key: "apply", label: "apply to a job posting", creates: "application",
    recordId: (h) => `APP-${V.chars(h, 8, "0123456789")}`,
    inputs: [
      { key: "applicant_name", label: "applicant name", type: "string", required: true, example: (h) => V.personName(h) },
      { key: "email", label: "applicant email", type: "string", format: "email", required: true, example: (h) => V.email(V.personName(h), V.mailDomain(V.sub(h, "d")), h) },
      { key: "resume_url", label: "link to the CV", type: "string", format: "uri", required: false, example: (h) => `https://files.example.com/cv/${V.hex(h, 10)}.pdf` }
    ],
    compute: (j, args) => ({ job_id: j?.id ?? "", job_title: j?.name ?? "", applicant_name: args["applicant_name"] ?? "", email: args["email"] ?? "", status: "submitted" }),
    recordAttrs: [
      { key: "job_id", label: "job ID", type: "string", ref: { type: "job", index: () => -1 } },
      { key: "job_title", label: "job title", type: "string" },
      { key: "applicant_name", label: "applicant", type: "string" },
      { key: "email", label: "email", type: "string", format: "email" },
      { key: "status", label: "application status", type: "string" }
    ]
  }]
}

/** All business and finance types. */
export const businessTypes: ReadonlyArray<EntityDef> = [company, stock, fund, crypto, cryptoExchange, bank, payment, invoice, employee, project, ticket, campaign, job]
