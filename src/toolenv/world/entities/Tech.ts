/**
 * The technical web: domains, IP addresses, vulnerabilities, web pages, uptime monitors, machine-learning models,
 * datasets, and two science catalogues (chemical compounds, near-Earth asteroids).
 */
import * as D from "../Dsl.ts"
import type { EntityCore, EntityDef } from "../Model.ts"
import * as V from "../Values.ts"
import * as W from "../Words.ts"

const ipCountry = D.ref("country_code", "country code", "country")
const ipCity = D.ref("city_id", "city ID", "city", { fact: false })

/** IPv4 addresses with geolocation and reputation. */
export const ipAddress: EntityDef = {
  type: "ip_address", noun: "IP address", plural: "IP addresses", synonyms: ["IP", "IPv4 address", "host address"], nameLabel: "address",
  size: 6000,
  id: { label: "IPv4 address", example: "185.199.108.153", make: (e, attempt) => V.ipv4(e.h(`ip${attempt}`)) },
  name: (e) => `host-${V.hex(e.h("host"), 6)}`,
  searchable: false,
  attrs: [
    ipCountry,
    D.refName("country", "country", ipCountry),
    ipCity,
    D.refName("city", "city", ipCity),
    D.str("isp", "internet service provider", (e) => `${V.coined(e.h("isp"))} ${V.pick(["Telecom", "Networks", "Broadband", "Cloud", "Communications"], e.h("ik"))}`),
    D.str("asn", "autonomous system number", (e) => `AS${V.int(e.h("asn"), 1000, 399999)}`),
    D.num("latitude", "latitude", (e) => V.float(e.h("latitude"), -50, 65, 4), { fact: false }),
    D.num("longitude", "longitude", (e) => V.float(e.h("longitude"), -125, 150, 4), { fact: false }),
    D.bool("is_proxy", "proxy or VPN", (e) => V.chance(e.h("proxy"), 0.12), { filter: "eq" }),
    D.count("threat_score", "threat score (0-100)", 0, 100),
    D.str("hostname", "reverse DNS hostname", (e) => `${V.hex(e.h("rdns"), 8)}.${V.pick(["static", "dyn", "cust", "pool"], e.h("rk"))}.${V.domainFor(V.coined(e.h("isp")), e.h("id"))}`)
  ]
}

const domainIp = D.ref("ip_address", "IP address", "ip_address", { inverse: "domains", inverseLabel: "domains hosted there" })

/** Internet domains. */
export const domain: EntityDef = {
  type: "domain", noun: "domain", plural: "domains", synonyms: ["website", "domain name", "site", "hostname"], nameLabel: "domain name",
  size: 5000,
  id: { label: "domain name", example: "example.com", make: (e, attempt) => attempt === 0 ? e.name : `${e.name.replace(/\.[a-z]+$/, "")}${attempt}.${V.pick(W.tlds, e.h("tld"))}` },
  name: (e) => `${e.h("s") % 2 === 0 ? V.slug(V.compound(e.h("c"))) : V.slug(V.coined(e.h("k")))}${e.h("x") % 4 === 0 ? V.pick(["hq", "app", "labs", "online", "shop"], e.h("sx")) : ""}.${V.pick(W.tlds, e.h("tld"))}`,
  attrs: [
    D.cat("registrar", "registrar", ["NameCheap", "GoDaddy", "Gandi", "Porkbun", "Cloudflare Registrar", "Tucows", "OVH", "Hover"]),
    D.date("created", "registration date", (e) => V.pastDate(e.h("created"), 30, 9500)),
    D.date("expires", "expiry date", (e) => V.futureDate(e.h("expires"), 5, 1800)),
    domainIp,
    D.list("nameservers", "name servers", (e) => [`ns1.${V.pick(["cloudflare.com", "awsdns.net", "domaincontrol.com", "gandi.net"], e.h("ns"))}`, `ns2.${V.pick(["cloudflare.com", "awsdns.net", "domaincontrol.com", "gandi.net"], e.h("ns"))}`]),
    D.bool("ssl_valid", "valid TLS certificate", (e) => V.chance(e.h("ssl"), 0.9), { filter: "eq" }),
    D.int("global_rank", "global traffic rank", (e) => 1 + e.index * 37 + (e.h("rank") % 37), { filter: "range" }),
    D.logCount("monthly_visits", "monthly visits", 100, 900_000_000)
  ],
  series: [D.around("visits", "daily visits", (e) => V.logUniform(e.h("monthly_visits"), 100, 900_000_000) / 30, 0.3, 0)]
}

/** Software vulnerabilities (CVE ids). */
export const vulnerability: EntityDef = {
  type: "vulnerability", noun: "vulnerability", plural: "vulnerabilities", synonyms: ["CVE", "security flaw", "security advisory", "exploit"], nameLabel: "title",
  size: 3000,
  id: { label: "CVE ID", example: "CVE-2021-44228", make: (e, attempt) => `CVE-${V.int(e.h("year"), 2015, 2024)}-${String(V.int(e.h(`n${attempt}`), 1000, 49999)).padStart(5, "0")}` },
  name: (e) => `${V.capitalize(V.pick(W.vulnKinds, e.h("kind")))} in ${V.coined(e.h("product"))} ${V.pick(["Server", "CMS", "Router Firmware", "Gateway", "Client", "Library", "Plugin"], e.h("pk"))}`,
  attrs: [
    D.cat("severity", "severity", ["low", "medium", "high", "critical"], { gen: (e) => severityOf(cvss(e)) }),
    D.num("cvss", "CVSS score", (e) => cvss(e), { filter: "range" }),
    D.date("published", "publication date", (e) => V.isoDate(Math.min(V.today, V.dayNumber(`${V.int(e.h("year"), 2015, 2024)}-01-01`) + V.int(e.h("doy"), 0, 364)))),
    D.str("vendor", "vendor", (e) => V.companyName(e.h("vendor"))),
    D.cat("kind", "weakness type", W.vulnKinds, { gen: (e) => V.pick(W.vulnKinds, e.h("kind")) }),
    D.bool("exploited_in_the_wild", "known to be exploited", (e) => V.chance(e.h("kev"), 0.1), { filter: "eq" }),
    D.bool("patch_available", "patch available", (e) => V.chance(e.h("patch"), 0.8))
  ]
}

const cvss = (e: EntityCore): number => V.float(e.h("cvss"), 2, 10, 1)
const severityOf = (score: number): string => (score >= 9 ? "critical" : score >= 7 ? "high" : score >= 4 ? "medium" : "low")

const pageDomain = D.ref("domain", "domain", "domain", { inverse: "pages", inverseLabel: "indexed pages" })

/** Indexed web pages. */
export const webPage: EntityDef = {
  type: "web_page", noun: "web page", plural: "web pages", synonyms: ["page", "search result", "link", "URL"], nameLabel: "title",
  size: 6000,
  id: { label: "URL", example: "https://example.com/guide", make: (e, attempt) => `https://${e.world.id("domain", pageDomain.ref?.index(e) ?? 0)}/${V.slug(pageTitle(e))}${attempt === 0 ? "" : `-${attempt}`}` },
  name: (e) => pageTitle(e),
  attrs: [
    pageDomain,
    D.cat("kind", "kind of page", W.pageKinds, { gen: (e) => V.pick(W.pageKinds, e.h("kind")) }),
    D.str("snippet", "snippet", (e) => `${V.capitalize(V.pick(W.pageKinds, e.h("kind")))} about ${V.pick(W.topics, e.h("topic"))}: ${V.sentence(e.h("sn"), "This page")}.`, { fact: false }),
    D.date("published", "publication date", (e) => V.pastDate(e.h("pub"), 0, 2000)),
    D.count("word_count", "word count", 150, 6000),
    D.cat("language", "language", W.languages.map((l) => l[1]))
  ]
}

const pageTitle = (e: EntityCore): string => {
  const t = V.pick(W.topics, e.h("topic"))
  switch (e.h("style") % 5) {
    case 0: return `The complete ${t} guide for ${V.int(e.h("y"), 2022, 2024)}`
    case 1: return `${V.int(e.h("n"), 5, 25)} ${t} ideas you can try this week`
    case 2: return `Why ${t} matters more than ever`
    case 3: return `${V.capitalize(t)}: ${V.title(e.h("title"))}`
    default: return `Beginner's ${t} ${V.pick(W.pageKinds, e.h("kind"))}`
  }
}

const monitorDomain = D.ref("domain", "monitored domain", "domain", { inverse: "monitors", inverseLabel: "uptime monitors" })

/** Uptime monitors. */
export const monitor: EntityDef = {
  type: "monitor", noun: "uptime monitor", plural: "uptime monitors", synonyms: ["monitor", "health check", "status check", "probe"], nameLabel: "name",
  size: 2500,
  id: D.coded("mon_", 10, "alnum", "monitor ID", "mon_7x2k9q4m1b"),
  name: (e) => `${e.world.id("domain", monitorDomain.ref?.index(e) ?? 0)} ${V.pick(["homepage", "API", "checkout", "login", "status page"], e.h("k"))}`,
  attrs: [
    monitorDomain,
    D.cat("status", "status", ["up", "up", "up", "degraded", "down"]),
    D.measure("uptime_30d_pct", "30-day uptime (%)", 95, 100, 3, { unit: "%" }),
    D.count("avg_response_ms", "average response time (ms)", 40, 2400, { unit: "ms" }),
    D.dateTime("last_checked", "last check", (e) => V.dateTimeOn(e.h("lc"), V.today)),
    D.cat("check_interval_s", "check interval (s)", ["30", "60", "300", "600"]),
    D.cat("region", "probe region", ["us-east", "us-west", "eu-central", "eu-west", "ap-southeast", "sa-east"])
  ],
  series: [D.around("response_ms", "response time (ms)", (e) => V.int(e.h("avg_response_ms"), 40, 2400), 0.4, 0, "ms")]
}

/** Machine-learning models on a model hub. */
export const mlModel: EntityDef = {
  type: "ml_model", noun: "model", plural: "models", synonyms: ["ML model", "AI model", "pretrained model", "checkpoint"], nameLabel: "model name",
  size: 2000,
  id: { label: "model id (owner/name)", example: "northwind/bert-base-v2", make: (e, attempt) => attempt === 0 ? e.name : `${e.name}-${attempt}` },
  name: (e) => `${V.slug(e.h("o") % 2 === 0 ? V.compound(e.h("org")) : V.coined(e.h("org2")))}/${V.pick(["bert", "t5", "vit", "whisper", "llama", "mistral", "roberta", "clip", "resnet", "deberta", "gpt2", "e5"], e.h("arch"))}-${V.pick(["base", "large", "small", "tiny", "xl"], e.h("size"))}-${V.pick(W.mlTasks, e.h("task")).split("-")[0]}`,
  attrs: [
    D.cat("task", "task", W.mlTasks, { gen: (e) => V.pick(W.mlTasks, e.h("task")) }),
    D.int("parameters_m", "parameters (millions)", (e) => V.logInt(e.h("params"), 4, 70000), { filter: "range" }),
    D.cat("license", "licence", W.licenses),
    D.logCount("downloads", "downloads (last month)", 0, 50_000_000),
    D.logCount("likes", "likes", 0, 12000),
    D.cat("library", "library", ["pytorch", "transformers", "onnx", "tensorflow", "jax", "gguf"]),
    D.date("last_modified", "last modified", (e) => V.pastDate(e.h("mod"), 0, 1200))
  ]
}

/** Published datasets. */
export const dataset: EntityDef = {
  type: "dataset", noun: "dataset", plural: "datasets", synonyms: ["data set", "corpus", "table", "open data"], nameLabel: "title",
  size: 2500,
  id: D.coded("ds-", 8, "hex", "dataset ID", "ds-4f9a2c1e"),
  name: (e) => `${V.pick(["Global", "Urban", "Annual", "Open", "Historical", "Daily", "Regional"], e.h("a"))} ${V.capitalize(V.pick(W.topics, e.h("topic")))} ${V.pick(["Statistics", "Observations", "Survey", "Index", "Records", "Benchmark"], e.h("n"))} ${V.int(e.h("y0"), 1990, 2015)}-${V.int(e.h("y1"), 2016, 2024)}`,
  attrs: [
    D.str("publisher", "publisher", (e) => V.companyName(e.h("pub"))),
    D.logCount("rows", "number of rows", 100, 900_000_000),
    D.count("columns", "number of columns", 3, 240),
    D.measure("size_mb", "size (MB)", 0.1, 48000, 1, { unit: "MB" }),
    D.cat("format", "format", ["csv", "json", "parquet", "xlsx", "sqlite"]),
    D.cat("license", "licence", W.licenses),
    D.date("updated", "last updated", (e) => V.pastDate(e.h("upd"), 0, 900)),
    D.logCount("downloads", "downloads", 0, 3_000_000),
    D.cat("topic", "topic", W.topics, { gen: (e) => V.pick(W.topics, e.h("topic")) })
  ]
}

const elementMass: ReadonlyArray<readonly [string, number]> = [["C", 12.011], ["H", 1.008], ["O", 15.999], ["N", 14.007], ["Cl", 35.45], ["S", 32.06], ["F", 18.998]]
const formulaCounts = (e: EntityCore): Array<number> => [
  V.int(e.h("nC"), 1, 18), V.int(e.h("nH"), 2, 36), V.int(e.h("nO"), 0, 6), V.int(e.h("nN"), 0, 3),
  V.chance(e.h("hasCl"), 0.15) ? V.int(e.h("nCl"), 1, 3) : 0, V.chance(e.h("hasS"), 0.1) ? 1 : 0, V.chance(e.h("hasF"), 0.1) ? V.int(e.h("nF"), 1, 3) : 0
]

/** Chemical compounds (CAS-style ids with valid check digits). */
export const chemical: EntityDef = {
  type: "chemical", noun: "chemical compound", plural: "chemical compounds", synonyms: ["compound", "substance", "molecule", "chemical"], nameLabel: "name",
  size: 2000,
  id: {
    label: "CAS registry number", example: "7732-18-5",
    make: (e, attempt) => {
      const body = String(V.int(e.h(`cas${attempt}`), 50, 9999999)) + String(V.int(e.h(`cas2${attempt}`), 10, 99))
      let sum = 0
      for (let k = 0; k < body.length; k++) sum += Number(body[body.length - 1 - k]) * (k + 1)
      return `${body.slice(0, -2)}-${body.slice(-2)}-${sum % 10}`
    }
  },
  name: (e, attempt) => {
    const first = `${V.int(D.draw(e, attempt, "pos"), 1, 6)}-${V.pick(W.chemPrefixes, D.draw(e, attempt, "pre"))}`
    // Later draws add a second substituent: the space of names grows from about 1,000 to about 100,000.
    const second = attempt >= 2 ? `${V.int(D.draw(e, attempt, "pos2"), 2, 8)}-${V.pick(W.chemPrefixes, D.draw(e, attempt, "pre2"))}` : ""
    return second === "" ? `${first}${V.pick(W.chemParents, D.draw(e, attempt, "parent"))}` : `${first}-${second}${V.pick(W.chemParents, D.draw(e, attempt, "parent"))}`
  },
  uniqueNames: true,
  attrs: [
    D.str("formula", "molecular formula", (e) => formulaCounts(e).map((n, k) => (n === 0 ? "" : `${elementMass[k]?.[0] ?? ""}${n === 1 ? "" : n}`)).join("")),
    D.num("molar_mass", "molar mass (g/mol)", (e) => Math.round(formulaCounts(e).reduce((acc, n, k) => acc + n * (elementMass[k]?.[1] ?? 0), 0) * 1000) / 1000, { filter: "range", unit: "g/mol" }),
    D.num("melting_point_c", "melting point (°C)", (e) => V.float(e.h("mp"), -120, 260, 1), { unit: "°C" }),
    D.num("boiling_point_c", "boiling point (°C)", (e) => Math.round((V.float(e.h("mp"), -120, 260, 1) + V.float(e.h("bp"), 15, 320, 1)) * 10) / 10, { unit: "°C" }),
    D.measure("density_g_cm3", "density (g/cm³)", 0.6, 2.4, 3, { unit: "g/cm3" }),
    D.cat("hazard_class", "GHS hazard class", ["flammable", "toxic", "corrosive", "irritant", "oxidizer", "environmental hazard", "not classified"]),
    D.cat("water_solubility", "water solubility", ["insoluble", "slightly soluble", "soluble", "miscible"])
  ]
}

/** Near-Earth asteroids. */
export const asteroid: EntityDef = {
  type: "asteroid", noun: "asteroid", plural: "asteroids", synonyms: ["near-Earth object", "NEO", "minor planet", "space rock"], nameLabel: "name",
  size: 3000,
  id: D.coded("", 7, "digits", "SPK-ID", "2000433"),
  name: (e) => e.h("named") % 3 === 0 ? `${V.int(e.h("num"), 1000, 99999)} ${V.pick(W.lastNames, e.h("n"))}` : `(${V.int(e.h("yr"), 1995, 2024)} ${V.letters(e.h("l"), 2)}${V.int(e.h("k"), 1, 99)})`,
  attrs: [
    D.measure("diameter_km", "estimated diameter (km)", 0.005, 12, 3, { unit: "km" }),
    D.bool("potentially_hazardous", "potentially hazardous", (e) => V.chance(e.h("pha"), 0.15), { filter: "eq" }),
    D.date("close_approach_date", "next close approach", (e) => V.futureDate(e.h("ca"), 1, 3650)),
    D.int("miss_distance_km", "miss distance (km)", (e) => V.logInt(e.h("miss"), 80_000, 75_000_000), { filter: "range", unit: "km" }),
    D.measure("velocity_km_s", "relative velocity (km/s)", 2, 42, 2, { unit: "km/s" }),
    D.cat("orbit_class", "orbit class", ["Apollo", "Aten", "Amor", "Atira"]),
    D.measure("absolute_magnitude", "absolute magnitude (H)", 14, 30, 1)
  ]
}

/** All technical and science types. */
export const techTypes: ReadonlyArray<EntityDef> = [ipAddress, domain, vulnerability, webPage, monitor, mlModel, dataset, chemical, asteroid]
