/**
 * Places and travel: countries, currencies, cities, airports, airlines, flights, hotels, restaurants, points of
 * interest, weather stations, transit, venues and events, real estate, energy sites.
 */
import { hash32 } from "../../../math/Random.ts"
import * as D from "../Dsl.ts"
import type { ActionDef, EntityDef } from "../Model.ts"
import * as V from "../Values.ts"
import * as W from "../Words.ts"

const noCountry = ["Unknown", "XX", "XXX", "USD", "Europe"] as const
const countryRow = (i: number): readonly [string, string, string, string, string] => W.countries[i] ?? noCountry

/** Countries: the real list, with generated facts. */
export const country: EntityDef = {
  type: "country", noun: "country", plural: "countries", synonyms: ["nation", "state"], nameLabel: "name", publicIds: true,
  size: W.countries.length,
  id: { label: "ISO 3166 alpha-2 code", example: "FR", make: (e, attempt) => attempt === 0 ? countryRow(e.index)[1] : `${countryRow(e.index)[1]}${attempt}` },
  name: (e) => countryRow(e.index)[0],
  attrs: [
    D.str("iso3", "ISO alpha-3 code", (e) => countryRow(e.index)[2]),
    D.cat("continent", "continent", ["Africa", "Asia", "Europe", "North America", "Oceania", "South America"], { gen: (e) => countryRow(e.index)[4] }),
    D.str("capital", "capital city", (e) => V.placeName(e.h("capital"))),
    D.logCount("population", "population", 2_000_000, 1_400_000_000),
    D.logCount("area_km2", "area in square kilometres", 20_000, 9_000_000, { unit: "km2" }),
    D.ref("currency_code", "currency code", "currency", { index: (e) => Math.max(0, W.currencies.findIndex((c) => c[0] === countryRow(e.index)[3])) }),
    D.str("calling_code", "international calling code", (e) => `+${V.int(e.h("calling"), 1, 998)}`),
    D.cat("official_language", "official language", W.languages.map((l) => l[0])),
    D.money("gdp_usd_billion", "GDP in billions of US dollars", 20, 25000),
    D.measure("life_expectancy", "life expectancy in years", 58, 85, 1)
  ]
}

/** Currencies: ISO codes, with generated exchange rates. */
export const currency: EntityDef = {
  type: "currency", noun: "currency", plural: "currencies", synonyms: ["money", "FX"], nameLabel: "name", publicIds: true,
  size: W.currencies.length,
  id: { label: "ISO 4217 currency code", example: "EUR", make: (e, attempt) => attempt === 0 ? (W.currencies[e.index] ?? ["XXX"])[0] : `X${V.letters(e.hash + attempt, 2)}` },
  name: (e) => (W.currencies[e.index] ?? ["", "Unknown"])[1],
  attrs: [
    D.str("symbol", "symbol", (e) => (W.currencies[e.index] ?? ["", "", "¤"])[2]),
    // Units of this currency per US dollar; USD is 1 by definition.
    D.num("rate_per_usd", "exchange rate per US dollar", (e) => e.index === 0 ? 1 : Math.round(V.logUniform(e.h("rate"), 0.3, 20000) * 10000) / 10000, { filter: "range" }),
    D.int("decimals", "minor-unit decimals", (e) => (e.h("dec") % 5 === 0 ? 0 : 2)),
    D.cat("region", "region", ["Americas", "Europe", "Asia-Pacific", "Middle East", "Africa"])
  ],
  series: [D.around("rate_per_usd", "exchange rate per US dollar", (e) => e.index === 0 ? 1 : V.logUniform(e.h("rate"), 0.3, 20000), 0.04, 4)]
}

const cityCountry = D.ref("country_code", "country code", "country", { inverse: "cities", inverseLabel: "cities" })

/** Cities: invented names, real countries. */
export const city: EntityDef = {
  type: "city", noun: "city", plural: "cities", synonyms: ["town", "municipality", "metro area", "place"], nameLabel: "name",
  size: 3000,
  id: D.numbered("CTY-", 5, "city ID"),
  name: (e, attempt) => V.placeName(D.draw(e, attempt, "name")),
  uniqueNames: true,
  attrs: [
    cityCountry,
    D.refName("country", "country", cityCountry),
    D.logCount("population", "population", 5_000, 12_000_000),
    D.num("latitude", "latitude", (e) => V.float(e.h("latitude"), -50, 65, 4), { fact: false }),
    D.num("longitude", "longitude", (e) => V.float(e.h("longitude"), -125, 150, 4), { fact: false }),
    D.str("timezone", "time zone", (e) => {
      const off = Math.round(V.float(e.h("longitude"), -125, 150, 4) / 15)
      return off === 0 ? "UTC" : `UTC${off > 0 ? "+" : "-"}${Math.abs(off)}`
    }),
    D.count("elevation_m", "elevation in metres", 0, 2400, { unit: "m" }),
    D.measure("area_km2", "area in square kilometres", 12, 2500, 1, { unit: "km2" }),
    D.str("mayor", "mayor", (e) => V.personName(e.h("mayor"))),
    D.count("founded", "founding year", 800, 1950),
    D.cat("climate", "climate zone", ["oceanic", "continental", "mediterranean", "tropical", "arid", "subarctic", "humid subtropical"])
  ],
  series: [
    {
      key: "temperature_c", label: "temperature (°C)", unit: "°C", type: "number",
      value: (e, day, h) => {
        const lat = V.float(e.h("latitude"), -50, 65, 4)
        const season = Math.cos((2 * Math.PI * (day - 196)) / 365.25) * (lat >= 0 ? 1 : -1)
        const mean = 27 - Math.abs(lat) * 0.35
        return Math.round((mean + season * (4 + Math.abs(lat) * 0.18) + 3 * D.wave(h, day)) * 10) / 10
      }
    },
    D.around("humidity_pct", "relative humidity (%)", (e) => V.float(e.h("hum"), 40, 80), 0.25, 0, "%"),
    {
      key: "precipitation_mm", label: "precipitation (mm)", unit: "mm", type: "number",
      value: (_e, day, h) => {
        const x = D.wave(h, day)
        return x > 0.25 ? Math.round((x - 0.25) * 400) / 10 : 0
      }
    },
    D.around("wind_kph", "wind speed (km/h)", (e) => V.float(e.h("wind"), 6, 30), 0.6, 1, "km/h")
  ]
}

const airportCity = D.ref("city_id", "city ID", "city", { inverse: "airports", inverseLabel: "airports" })

/** Airports: IATA codes derived from their city's name. */
export const airport: EntityDef = {
  type: "airport", noun: "airport", plural: "airports", synonyms: ["airfield", "air terminal"], nameLabel: "name",
  size: 1200,
  id: D.lettersFromName(3, "IATA airport code", "LHR"),
  name: (e) => {
    const c = airportCity.ref?.index(e) ?? 0
    return `${e.world.name("city", c)} ${V.pick(["International Airport", "Airport", "Regional Airport", "International", "Municipal Airport"], e.h("kind"))}`
  },
  attrs: [
    airportCity,
    D.refName("city", "city", airportCity),
    D.ref("country_code", "country code", "country", {
      inverse: "airports", inverseLabel: "airports",
      index: (e) => indexOfCountry(e.world.attr("city", airportCity.ref?.index(e) ?? 0, "country_code"))
    }),
    D.str("icao", "ICAO code", (e) => V.letters(e.h("icao"), 4)),
    D.count("runways", "number of runways", 1, 6),
    D.count("terminals", "number of terminals", 1, 7),
    D.count("elevation_ft", "elevation in feet", 5, 7000, { unit: "ft" }),
    D.logCount("annual_passengers", "annual passengers", 50_000, 90_000_000),
    D.refAttr("timezone", "time zone", "string", airportCity, "timezone")
  ]
}

/** Index of a country by its code (countries are few; a scan is fine). */
const indexOfCountry = (code: unknown): number => W.countries.findIndex((c) => c[1] === code)

const airlineCountry = D.ref("country_code", "country code", "country")

/** Airlines: two-character designators. */
export const airline: EntityDef = {
  type: "airline", noun: "airline", plural: "airlines", synonyms: ["carrier", "air carrier"], nameLabel: "name",
  size: 300,
  id: {
    label: "IATA airline designator", example: "BA",
    make: (e, attempt) => attempt === 0 ? V.slug(e.name, "").toUpperCase().slice(0, 2) : V.chars(hash32(`al${attempt}`, e.hash), 2, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
  },
  name: (e) => `${e.h("style") % 2 === 0 ? V.coined(e.h("n")) : V.compound(e.h("c"))} ${V.pick(["Airways", "Air", "Airlines", "Aviation", "Jet"], e.h("s"))}`,
  attrs: [
    airlineCountry,
    D.refName("country", "country", airlineCountry),
    D.count("fleet_size", "fleet size", 8, 900),
    D.count("founded", "founding year", 1920, 2020),
    D.ref("hub_airport", "hub airport code", "airport", { inverse: "hub_airlines", inverseLabel: "airlines based there" }),
    D.cat("alliance", "alliance", ["Star Alliance", "oneworld", "SkyTeam", "none"]),
    D.measure("rating", "passenger rating", 2.5, 5, 1),
    D.measure("on_time_pct", "on-time performance (%)", 62, 96, 1, { unit: "%" })
  ]
}

const flightOrigin = D.ref("origin", "departure airport code", "airport", { inverse: "departures", inverseLabel: "departing flights" })
const flightDestination = D.ref("destination", "arrival airport code", "airport", {
  inverse: "arrivals", inverseLabel: "arriving flights",
  index: (e) => {
    const n = e.world.size("airport")
    const o = flightOrigin.ref?.index(e) ?? 0
    const d = e.h("destination") % n
    return d === o ? (d + 1) % n : d
  }
})

/** Scheduled flights, numbered under their airline. */
export const flight: EntityDef = {
  type: "flight", noun: "flight", plural: "flights", synonyms: ["flight connection", "air route", "departure"], nameLabel: "flight number",
  size: 0,
  parent: { type: "airline", key: "airline", label: "airline", min: 10, max: 30, relation: "flights" },
  id: { label: "flight number", example: "BA2490", make: (e, attempt) => `${e.world.id("airline", e.parent)}${V.int(hash32(`fn${attempt}`, e.hash), 100, 9999)}` },
  name: (e) => `${e.world.name("airline", e.parent)} flight`,
  searchable: false,
  attrs: [
    D.parentId("airline", "airline code", "airline"),
    D.parentName("airline_name", "airline name", "airline"),
    flightOrigin,
    D.refName("origin_city", "departure city", flightOrigin),
    flightDestination,
    D.refName("destination_city", "arrival city", flightDestination),
    D.str("departure_time", "scheduled departure time", (e) => `${String(V.int(e.h("dep"), 5, 22)).padStart(2, "0")}:${String((e.h("depm") % 12) * 5).padStart(2, "0")}`),
    D.count("duration_min", "flight duration in minutes", 45, 840, { unit: "min" }),
    D.cat("aircraft", "aircraft type", ["A320neo", "A321", "A330-900", "A350-900", "B737 MAX 8", "B787-9", "B777-300ER", "E195-E2", "ATR 72"]),
    D.money("price", "economy fare", 49, 1800, "USD"),
    D.count("seats_available", "seats available", 0, 180),
    D.cat("status", "status", ["scheduled", "on time", "delayed", "boarding", "cancelled"])
  ],
  actions: [{
    key: "book", label: "book a seat on a flight", creates: "flight_booking",
    recordId: (h) => V.letters(h, 6),
    inputs: [
      { key: "date", label: "travel date", type: "string", format: "date", required: true, example: (h) => V.futureDate(h, 7, 90) },
      { key: "passenger_name", label: "passenger full name", type: "string", required: true, example: (h) => V.personName(h) },
      { key: "cabin", label: "cabin class", type: "string", values: ["economy", "premium", "business", "first"], required: false, example: (h) => V.pick(["economy", "business"], h) }
    ],
    compute: (f, args, h) => {
      const cabin = typeof args["cabin"] === "string" ? args["cabin"] : "economy"
      const fare = typeof f?.get("price") === "number" ? f.get("price") as number : 0
      const factor = cabin === "first" ? 4.5 : cabin === "business" ? 3 : cabin === "premium" ? 1.6 : 1
      return {
        flight_number: f?.id ?? "",
        date: args["date"] ?? "",
        passenger_name: args["passenger_name"] ?? "",
        cabin,
        seat: `${V.int(h, 3, 45)}${"ABCDEF"[h % 6]}`,
        total_price: Math.round(fare * factor * 100) / 100,
        currency: "USD",
        status: "confirmed"
      }
    },
    recordAttrs: [
      { key: "flight_number", label: "flight number", type: "string", ref: { type: "flight", index: () => -1 } },
      { key: "date", label: "travel date", type: "string", format: "date" },
      { key: "passenger_name", label: "passenger", type: "string" },
      { key: "cabin", label: "cabin class", type: "string" },
      { key: "seat", label: "seat", type: "string" },
      { key: "total_price", label: "total price", type: "number", unit: "USD" },
      { key: "currency", label: "currency", type: "string" },
      { key: "status", label: "booking status", type: "string" }
    ]
  }]
}

const hotelCity = D.ref("city_id", "city ID", "city", { inverse: "hotels", inverseLabel: "hotels" })

const hotelBooking: ActionDef = {
  key: "book", label: "book a room at a hotel", creates: "hotel_booking",
  recordId: (h) => `HB-${V.chars(h, 8, "ABCDEFGHJKLMNPQRSTUVWXYZ23456789")}`,
  inputs: [
    { key: "check_in", label: "check-in date", type: "string", format: "date", required: true, example: (h) => V.futureDate(h, 7, 120) },
    { key: "nights", label: "number of nights", type: "integer", minimum: 1, maximum: 30, required: true, example: (h) => V.int(h, 1, 7) },
    { key: "guests", label: "number of guests", type: "integer", minimum: 1, maximum: 8, required: false, example: (h) => V.int(h, 1, 4) },
    { key: "guest_email", label: "guest email", type: "string", format: "email", required: true, example: (h) => V.email(V.personName(h), V.mailDomain(V.sub(h, "d")), h) }
  ],
  compute: (hotel, args, h) => {
    const nights = typeof args["nights"] === "number" ? args["nights"] : 1
    const rate = typeof hotel?.get("price_per_night") === "number" ? hotel.get("price_per_night") as number : 0
    const checkIn = typeof args["check_in"] === "string" ? args["check_in"] : V.isoDate(V.today)
    return {
      hotel_id: hotel?.id ?? "",
      hotel_name: hotel?.name ?? "",
      check_in: checkIn,
      check_out: V.isoDate(V.dayNumber(checkIn) + nights),
      nights,
      guests: typeof args["guests"] === "number" ? args["guests"] : 1,
      total_price: Math.round(rate * nights * 100) / 100,
      currency: hotel?.get("currency") ?? "USD",
      status: h % 10 === 0 ? "pending" : "confirmed"
    }
  },
  recordAttrs: [
    { key: "hotel_id", label: "hotel ID", type: "string", ref: { type: "hotel", index: () => -1 } },
    { key: "hotel_name", label: "hotel", type: "string" },
    { key: "check_in", label: "check-in date", type: "string", format: "date" },
    { key: "check_out", label: "check-out date", type: "string", format: "date" },
    { key: "nights", label: "nights", type: "integer" },
    { key: "guests", label: "guests", type: "integer" },
    { key: "total_price", label: "total price", type: "number" },
    { key: "currency", label: "currency", type: "string" },
    { key: "status", label: "booking status", type: "string" }
  ]
}

/** Hotels, priced in their country's currency. */
export const hotel: EntityDef = {
  type: "hotel", noun: "hotel", plural: "hotels", synonyms: ["accommodation", "lodging", "property", "stay", "inn"], nameLabel: "name",
  size: 5000,
  id: D.numbered("HTL-", 6, "hotel ID"),
  name: (e, attempt) => {
    const c = e.world.name("city", hotelCity.ref?.index(e) ?? 0)
    switch (D.draw(e, attempt, "style") % 6) {
      case 0: return `Grand ${c} Hotel`
      case 1: return `${V.pick(W.lastNames, D.draw(e, attempt, "n"))} Inn ${c}`
      case 2: return `${V.compound(D.draw(e, attempt, "b"))} Suites ${c}`
      case 3: return `Hotel ${V.pick(W.titleNouns, D.draw(e, attempt, "t"))} ${c}`
      case 4: return `The ${V.pick(W.titleAdjectives, D.draw(e, attempt, "a"))} ${V.pick(["Lodge", "House", "Residence", "Boutique Hotel"], D.draw(e, attempt, "k"))}`
      default: return `${V.coined(D.draw(e, attempt, "c"))} ${c} ${V.pick(["Resort", "Hotel & Spa", "Plaza", "Central"], D.draw(e, attempt, "k"))}`
    }
  },
  uniqueNames: true,
  attrs: [
    hotelCity,
    D.refName("city", "city", hotelCity),
    D.str("address", "street address", (e) => V.streetAddress(e.h("addr"))),
    D.count("stars", "star rating", 1, 5),
    D.measure("review_score", "guest review score (out of 10)", 5.8, 9.8, 1),
    D.int("reviews_count", "number of reviews", (e) => V.logInt(e.h("rev"), 12, 18000), { filter: "range" }),
    D.num("price_per_night", "price per night", (e) => {
      const usd = V.amount(e.h("price"), 35, 900)
      const cc = e.world.attr("city", hotelCity.ref?.index(e) ?? 0, "country_code")
      const cur = W.currencies.findIndex((c) => c[0] === (W.countries.find((r) => r[1] === cc)?.[3] ?? "USD"))
      const rate = cur < 0 ? 1 : e.world.attr("currency", cur, "rate_per_usd")
      return Math.round(usd * (typeof rate === "number" ? rate : 1) * 100) / 100
    }, { filter: "range" }),
    D.ref("currency", "currency code", "currency", {
      index: (e) => {
        const cc = e.world.attr("city", hotelCity.ref?.index(e) ?? 0, "country_code")
        const code = W.countries.find((r) => r[1] === cc)?.[3] ?? "USD"
        return Math.max(0, W.currencies.findIndex((c) => c[0] === code))
      }
    }),
    D.list("amenities", "amenities", (e) => W.amenities.filter((_, k) => V.chance(e.h(`am${k}`), 0.35))),
    D.count("rooms", "number of rooms", 8, 900),
    D.str("check_in_time", "check-in time", (e) => V.pick(["14:00", "15:00", "16:00"], e.h("cin"))),
    D.str("phone", "phone number", (e) => V.phone(e.h("phone"))),
    D.str("website", "website", (e) => `https://www.${V.domainFor(e.name, e.h("dom"))}`, { format: "uri", fact: false })
  ],
  actions: [hotelBooking]
}

const restaurantCity = D.ref("city_id", "city ID", "city", { inverse: "restaurants", inverseLabel: "restaurants" })

/** Restaurants. */
export const restaurant: EntityDef = {
  type: "restaurant", noun: "restaurant", plural: "restaurants", synonyms: ["eatery", "dining spot", "place to eat", "bistro"], nameLabel: "name",
  size: 5000,
  id: D.coded("rst_", 10, "alnum", "restaurant ID", "rst_8k2j4m0q1z"),
  name: (e, attempt) => {
    switch (D.draw(e, attempt, "style") % 5) {
      case 0: return `${V.pick(W.lastNames, D.draw(e, attempt, "n"))}'s ${V.pick(["Kitchen", "Bistro", "Grill", "Trattoria", "Table", "Diner"], D.draw(e, attempt, "k"))}`
      case 1: return `The ${V.pick(W.titleAdjectives, D.draw(e, attempt, "a"))} ${V.pick(["Fork", "Spoon", "Olive", "Lantern", "Pepper", "Oak"], D.draw(e, attempt, "k"))}`
      case 2: return `${V.pick(W.cuisines, e.h("cuisine"))} House ${V.pick(W.placeRoots, D.draw(e, attempt, "r"))}`
      case 3: return `Casa ${V.pick(W.firstNames, D.draw(e, attempt, "f"))}`
      default: return `${V.coined(D.draw(e, attempt, "c"))} ${V.pick(["Eatery", "Cantina", "Izakaya", "Brasserie", "Taverna", "Noodle Bar"], D.draw(e, attempt, "k"))}`
    }
  },
  uniqueNames: true,
  attrs: [
    restaurantCity,
    D.refName("city", "city", restaurantCity),
    D.cat("cuisine", "cuisine", W.cuisines),
    D.measure("rating", "rating (out of 5)", 2.8, 5, 1),
    D.count("price_level", "price level (1-4)", 1, 4),
    D.str("address", "street address", (e) => V.streetAddress(e.h("addr"))),
    D.str("phone", "phone number", (e) => V.phone(e.h("phone"))),
    D.str("opening_hours", "opening hours", (e) => `${V.pick(["11:00", "11:30", "12:00", "17:00", "08:00"], e.h("open"))}-${V.pick(["22:00", "23:00", "23:30", "00:00", "15:00"], e.h("close"))}`),
    D.count("seats", "number of seats", 12, 240),
    D.bool("accepts_reservations", "whether it takes reservations", (e) => V.chance(e.h("res"), 0.7))
  ],
  actions: [{
    key: "reserve", label: "reserve a table at a restaurant", creates: "reservation",
    recordId: (h) => `RSV-${V.chars(h, 7, "0123456789")}`,
    inputs: [
      { key: "date", label: "reservation date", type: "string", format: "date", required: true, example: (h) => V.futureDate(h, 1, 30) },
      { key: "time", label: "reservation time (HH:MM)", type: "string", required: true, example: (h) => V.pick(["19:00", "19:30", "20:00", "12:30"], h) },
      { key: "party_size", label: "party size", type: "integer", minimum: 1, maximum: 20, required: true, example: (h) => V.int(h, 2, 6) },
      { key: "name", label: "name for the reservation", type: "string", required: false, example: (h) => V.personName(h) }
    ],
    compute: (r, args, h) => ({
      restaurant_id: r?.id ?? "",
      restaurant_name: r?.name ?? "",
      date: args["date"] ?? "",
      time: args["time"] ?? "",
      party_size: args["party_size"] ?? 2,
      table: `T${V.int(h, 1, 40)}`,
      status: r?.get("accepts_reservations") === false ? "waitlisted" : "confirmed"
    }),
    recordAttrs: [
      { key: "restaurant_id", label: "restaurant ID", type: "string", ref: { type: "restaurant", index: () => -1 } },
      { key: "restaurant_name", label: "restaurant", type: "string" },
      { key: "date", label: "date", type: "string", format: "date" },
      { key: "time", label: "time", type: "string" },
      { key: "party_size", label: "party size", type: "integer" },
      { key: "table", label: "table", type: "string" },
      { key: "status", label: "reservation status", type: "string" }
    ]
  }]
}

const poiCity = D.ref("city_id", "city ID", "city", { inverse: "places", inverseLabel: "points of interest" })

/** Points of interest (Google-style place ids). */
export const poi: EntityDef = {
  type: "poi", noun: "place", plural: "places", synonyms: ["point of interest", "POI", "landmark", "venue", "spot"], nameLabel: "name",
  size: 6000,
  id: D.coded("ChIJ", 23, "base64", "place ID", "ChIJd8BlQ2BZwokRAFUEcm_qrcA"),
  name: (e, attempt) => {
    const kind = V.pick(W.poiKinds, e.h("kind"))
    const c = e.world.name("city", poiCity.ref?.index(e) ?? 0)
    switch (D.draw(e, attempt, "style") % 4) {
      case 0: return `${c} ${V.capitalize(kind)}`
      case 1: return `${V.pick(W.lastNames, D.draw(e, attempt, "n"))} ${V.capitalize(kind)}`
      case 2: return `${V.compound(D.draw(e, attempt, "b"))} ${V.capitalize(kind)}`
      default: return `${V.capitalize(kind)} ${V.pick(W.titleNouns, D.draw(e, attempt, "t"))}`
    }
  },
  uniqueNames: true,
  attrs: [
    D.cat("kind", "kind of place", W.poiKinds),
    poiCity,
    D.refName("city", "city", poiCity),
    D.str("address", "street address", (e) => V.streetAddress(e.h("addr"))),
    D.num("latitude", "latitude", (e) => V.float(e.h("latitude"), -50, 65, 5), { fact: false }),
    D.num("longitude", "longitude", (e) => V.float(e.h("longitude"), -125, 150, 5), { fact: false }),
    D.measure("rating", "rating (out of 5)", 2.5, 5, 1),
    D.int("user_ratings_total", "number of ratings", (e) => V.logInt(e.h("urt"), 3, 40000)),
    D.bool("open_now", "whether it is open now", (e) => V.chance(e.h("open"), 0.65)),
    D.str("phone", "phone number", (e) => V.phone(e.h("phone")))
  ]
}

/** Weather stations, several per city. */
export const weatherStation: EntityDef = {
  type: "weather_station", noun: "weather station", plural: "weather stations", synonyms: ["station", "observation site", "sensor site"], nameLabel: "name",
  size: 0,
  parent: { type: "city", key: "city_id", label: "city", min: 0, max: 3, relation: "weather_stations" },
  id: D.numbered("WS", 6, "station ID"),
  name: (e) => `${e.world.name("city", e.parent)} ${V.pick(["Airport", "Central", "North", "Harbour", "University", "Hill"], e.h("n"))} Station`,
  attrs: [
    D.parentId("city_id", "city ID", "city"),
    D.parentName("city", "city", "city"),
    D.count("elevation_m", "elevation in metres", 0, 2600, { unit: "m" }),
    D.date("installed", "installation date", (e) => V.pastDate(e.h("inst"), 400, 12000)),
    D.cat("status", "status", ["active", "active", "active", "maintenance", "offline"])
  ],
  series: [
    D.around("temperature_c", "temperature (°C)", (e) => V.float(e.h("t"), 2, 26), 0.5, 1, "°C"),
    D.around("pressure_hpa", "pressure (hPa)", (e) => V.float(e.h("p"), 990, 1025), 0.01, 1, "hPa")
  ]
}

const lineCity = D.ref("city_id", "city ID", "city", { inverse: "transit_lines", inverseLabel: "transit lines" })

/** Public-transport lines. */
export const transitLine: EntityDef = {
  type: "transit_line", noun: "transit line", plural: "transit lines", synonyms: ["line", "route", "service"], nameLabel: "name",
  size: 600,
  id: D.numbered("LN-", 4, "line ID"),
  name: (e) => {
    const c = e.world.name("city", lineCity.ref?.index(e) ?? 0)
    switch (e.h("style") % 3) {
      case 0: return `${c} ${V.pick(W.colours, e.h("c"))} Line`
      case 1: return `${c} Line ${V.int(e.h("n"), 1, 14)}`
      default: return `${c} ${V.pick(W.placeRoots, e.h("r"))} Express`
    }
  },
  attrs: [
    lineCity,
    D.refName("city", "city", lineCity),
    D.cat("mode", "mode", W.transitModes),
    D.childCount("stations_count", "number of stations", "station"),
    D.str("operator", "operator", (e) => `${V.coined(e.h("op"))} Transit`),
    D.count("frequency_min", "frequency in minutes", 2, 30, { unit: "min" }),
    D.measure("length_km", "length in kilometres", 3, 80, 1, { unit: "km" }),
    D.count("opened", "opening year", 1890, 2023)
  ]
}

/** Stations along a transit line. */
export const station: EntityDef = {
  type: "station", noun: "station", plural: "stations", synonyms: ["stop", "transit stop"], nameLabel: "name",
  size: 0,
  parent: { type: "transit_line", key: "line_id", label: "line", min: 6, max: 18, relation: "stations" },
  id: D.numbered("STN-", 6, "station ID"),
  name: (e, attempt) => `${D.draw(e, attempt, "s") % 2 === 0 ? V.pick(W.lastNames, D.draw(e, attempt, "n")) : V.pick(W.placeRoots, D.draw(e, attempt, "r")) + V.pick(W.placeSuffixes, D.draw(e, attempt, "x"))} ${V.pick(["Station", "Square", "Central", "Park", "Road"], D.draw(e, attempt, "k"))}`,
  uniqueNames: true,
  attrs: [
    D.parentId("line_id", "line ID", "transit_line"),
    D.parentName("line", "line", "transit_line"),
    D.int("stop_number", "stop number on the line", (e) => e.position + 1),
    D.count("zone", "fare zone", 1, 6),
    D.bool("accessible", "step-free access", (e) => V.chance(e.h("acc"), 0.7)),
    D.logCount("daily_passengers", "daily passengers", 300, 250000)
  ]
}

const venueCity = D.ref("city_id", "city ID", "city", { inverse: "venues", inverseLabel: "venues" })

/** Event venues. */
export const venue: EntityDef = {
  type: "venue", noun: "venue", plural: "venues", synonyms: ["arena", "hall", "location"], nameLabel: "name",
  size: 1500,
  id: D.numbered("VEN-", 5, "venue ID"),
  name: (e, attempt) => `${D.draw(e, attempt, "s") % 2 === 0 ? V.pick(W.lastNames, D.draw(e, attempt, "n")) : V.compound(D.draw(e, attempt, "c"))} ${V.pick(W.venueKinds, e.h("kind"))}`,
  uniqueNames: true,
  attrs: [
    venueCity,
    D.refName("city", "city", venueCity),
    D.cat("kind", "kind of venue", W.venueKinds, { gen: (e) => V.pick(W.venueKinds, e.h("kind")) }),
    D.logCount("capacity", "capacity", 150, 90000),
    D.str("address", "street address", (e) => V.streetAddress(e.h("addr"))),
    D.count("opened", "opening year", 1880, 2023)
  ]
}

const eventVenue = D.ref("venue_id", "venue ID", "venue", { inverse: "events", inverseLabel: "events" })

/** Public events (festivals, conferences). */
export const event: EntityDef = {
  type: "event", noun: "event", plural: "events", synonyms: ["festival", "happening", "show", "conference"], nameLabel: "name",
  size: 4000,
  id: D.numbered("EVT-", 7, "event ID"),
  name: (e) => {
    const v = eventVenue.ref?.index(e) ?? 0
    const c = e.world.name("city", venueCity.ref?.index(e.world.entity("venue", v)) ?? 0)
    return `${c} ${V.pick(W.eventKinds, e.h("kind"))} ${V.int(e.h("y"), 2024, 2025)}`
  },
  attrs: [
    D.cat("category", "category", W.eventKinds, { gen: (e) => V.pick(W.eventKinds, e.h("kind")) }),
    eventVenue,
    D.refName("venue", "venue", eventVenue),
    D.str("city", "city", (e) => e.world.attr("venue", eventVenue.ref?.index(e) ?? 0, "city") as string),
    D.date("start_date", "start date", (e) => V.futureDate(e.h("start"), 3, 240)),
    D.date("end_date", "end date", (e) => V.isoDate(V.dayNumber(V.futureDate(e.h("start"), 3, 240)) + V.int(e.h("len"), 0, 4))),
    D.money("price_from", "ticket price from", 10, 450, "USD"),
    D.str("organizer", "organizer", (e) => V.companyName(e.h("org"))),
    D.count("tickets_available", "tickets available", 0, 5000)
  ],
  actions: [{
    key: "buy_tickets", label: "buy tickets for an event", creates: "ticket_order",
    recordId: (h) => `TO-${V.chars(h, 9, "0123456789")}`,
    inputs: [
      { key: "quantity", label: "number of tickets", type: "integer", minimum: 1, maximum: 10, required: true, example: (h) => V.int(h, 1, 4) },
      { key: "email", label: "buyer email", type: "string", format: "email", required: true, example: (h) => V.email(V.personName(h), V.mailDomain(V.sub(h, "d")), h) }
    ],
    compute: (ev, args, _h) => {
      const q = typeof args["quantity"] === "number" ? args["quantity"] : 1
      const price = typeof ev?.get("price_from") === "number" ? ev.get("price_from") as number : 0
      const left = typeof ev?.get("tickets_available") === "number" ? ev.get("tickets_available") as number : 0
      return {
        event_id: ev?.id ?? "",
        event_name: ev?.name ?? "",
        quantity: q,
        total_price: Math.round(price * q * 100) / 100,
        currency: "USD",
        status: left >= q ? "confirmed" : "sold_out"
      }
    },
    recordAttrs: [
      { key: "event_id", label: "event ID", type: "string", ref: { type: "event", index: () => -1 } },
      { key: "event_name", label: "event", type: "string" },
      { key: "quantity", label: "tickets", type: "integer" },
      { key: "total_price", label: "total price", type: "number" },
      { key: "currency", label: "currency", type: "string" },
      { key: "status", label: "order status", type: "string" }
    ]
  }]
}

const propertyCity = D.ref("city_id", "city ID", "city", { inverse: "listings", inverseLabel: "property listings" })

/** Real-estate listings. */
export const property: EntityDef = {
  type: "property", noun: "property", plural: "properties", synonyms: ["listing", "home", "real estate listing", "house for sale"], nameLabel: "address",
  size: 6000,
  id: D.coded("MLS", 8, "digits", "listing ID", "MLS40219384"),
  name: (e) => `${V.streetAddress(e.h("addr"))}, ${e.world.name("city", propertyCity.ref?.index(e) ?? 0)}`,
  attrs: [
    propertyCity,
    D.refName("city", "city", propertyCity),
    D.cat("property_type", "property type", W.propertyTypes),
    D.money("price", "asking price", 60_000, 4_500_000, "USD"),
    D.count("bedrooms", "bedrooms", 0, 6),
    D.count("bathrooms", "bathrooms", 1, 5),
    D.count("area_sqft", "floor area in square feet", 320, 6500, { unit: "sqft" }),
    D.count("year_built", "year built", 1890, 2024),
    D.date("listed", "listing date", (e) => V.pastDate(e.h("listed"), 0, 180)),
    D.cat("status", "listing status", ["for sale", "pending", "sold", "for rent"]),
    D.str("agent", "listing agent", (e) => V.personName(e.h("agent")))
  ]
}

const chargerCity = D.ref("city_id", "city ID", "city", { inverse: "chargers", inverseLabel: "EV charging stations" })

/** EV charging stations. */
export const chargingStation: EntityDef = {
  type: "charging_station", noun: "charging station", plural: "charging stations", synonyms: ["EV charger", "charge point", "supercharger"], nameLabel: "name",
  size: 3000,
  id: D.numbered("EVS-", 6, "station ID"),
  name: (e) => `${V.pick(W.compoundHeads, e.h("h"))} Charge ${e.world.name("city", chargerCity.ref?.index(e) ?? 0)} ${V.pick(["Hub", "Plaza", "Point", "Depot"], e.h("k"))}`,
  attrs: [
    chargerCity,
    D.refName("city", "city", chargerCity),
    D.str("operator", "operator", (e) => `${V.coined(e.h("op"))} Charging`),
    D.list("connectors", "connector types", (e) => W.connectors.filter((_, k) => V.chance(e.h(`c${k}`), 0.45))),
    D.cat("max_power_kw", "maximum power (kW)", ["7", "22", "50", "150", "250", "350"]),
    D.count("stalls", "number of stalls", 2, 24),
    D.num("price_per_kwh", "price per kWh", (e) => V.float(e.h("kwh"), 0.18, 0.79, 2), { unit: "USD", filter: "range" }),
    D.bool("open_24h", "open 24 hours", (e) => V.chance(e.h("24"), 0.6))
  ],
  series: [D.around("available_stalls", "available stalls", (e) => V.int(e.h("stalls"), 2, 24) / 2, 0.9, 0)]
}

const plantCountry = D.ref("country_code", "country code", "country", { inverse: "power_plants", inverseLabel: "power plants" })

/** Power plants. */
export const powerPlant: EntityDef = {
  type: "power_plant", noun: "power plant", plural: "power plants", synonyms: ["power station", "generating station", "energy facility"], nameLabel: "name",
  size: 1500,
  id: D.numbered("PP-", 5, "plant ID"),
  name: (e) => `${V.placeName(e.h("p"))} ${V.capitalize(V.pick(W.energySources, e.h("source")))} ${V.pick(["Plant", "Park", "Farm", "Station"], e.h("k"))}`,
  attrs: [
    D.cat("source", "energy source", W.energySources, { gen: (e) => V.pick(W.energySources, e.h("source")) }),
    plantCountry,
    D.refName("country", "country", plantCountry),
    D.measure("capacity_mw", "capacity (MW)", 5, 4000, 1, { unit: "MW" }),
    D.count("commissioned", "commissioning year", 1960, 2024),
    D.str("operator", "operator", (e) => V.companyName(e.h("op"))),
    D.measure("capacity_factor", "capacity factor", 0.12, 0.93, 2)
  ],
  series: [D.around("output_mw", "output (MW)", (e) => V.float(e.h("capacity_mw"), 5, 4000, 1) * V.float(e.h("capacity_factor"), 0.12, 0.93, 2), 0.35, 1, "MW")]
}

/** All place and travel types. */
export const places: ReadonlyArray<EntityDef> = [
  country, currency, city, airport, airline, flight, hotel, restaurant, poi, weatherStation, transitLine, station, venue,
  event, property, chargingStation, powerPlant
]
