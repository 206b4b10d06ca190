/**
 * Commerce and everyday life: products, reviews, stores, orders, shipments, coupons, education, recipes, health,
 * medicine, vehicles and devices.
 */
import { hash32 } from "../../../math/Random.ts"
import * as D from "../Dsl.ts"
import type { EntityCore, EntityDef } from "../Model.ts"
import * as V from "../Values.ts"
import * as W from "../Words.ts"

const storeCity = D.ref("city_id", "city ID", "city", { inverse: "stores", inverseLabel: "stores" })

/** Stores and marketplace sellers. */
export const store: EntityDef = {
  type: "store", noun: "store", plural: "stores", synonyms: ["shop", "seller", "merchant", "retailer", "outlet"], nameLabel: "name",
  size: 1200,
  id: D.numbered("STR-", 5, "store ID"),
  name: (e) => `${e.h("s") % 2 === 0 ? V.compound(e.h("c")) : V.pick(W.lastNames, e.h("n"))} ${V.pick(["Store", "Outlet", "Shop", "Market", "Supply Co.", "Goods"], e.h("k"))}`,
  attrs: [
    storeCity,
    D.refName("city", "city", storeCity),
    D.measure("rating", "seller rating (out of 5)", 3, 5, 1),
    D.cat("store_type", "store type", ["online", "retail", "marketplace seller", "outlet"]),
    D.date("opened", "opening date", (e) => V.pastDate(e.h("open"), 100, 9000)),
    D.str("phone", "phone number", (e) => V.phone(e.h("phone"))),
    D.str("website", "website", (e) => `https://www.${V.domainFor(e.name, e.h("dom"))}`, { format: "uri", fact: false })
  ]
}

const productStore = D.ref("store_id", "seller store ID", "store", { inverse: "products", inverseLabel: "products" })
const productPrice = (e: EntityCore): number => V.amount(e.h("price"), 4, 2400)

/** Products (ASIN-style ids). */
export const product: EntityDef = {
  type: "product", noun: "product", plural: "products", synonyms: ["item", "article", "listing", "SKU", "good"], nameLabel: "name",
  size: 8000,
  id: D.coded("B0", 8, "upper", "product ID (ASIN)", "B08N5WRWNW"),
  name: (e) => `${V.coined(e.h("brand"))} ${V.pick(W.productNouns, e.h("noun"))} ${V.pick(["X2", "Pro", "Lite", "Max", "S", "Air", "3", "Plus", "Mini", "Ultra"], e.h("model"))}`,
  attrs: [
    D.str("brand", "brand", (e) => V.coined(e.h("brand"))),
    D.cat("category", "category", W.productCategories),
    D.num("price", "price", (e) => productPrice(e), { filter: "range", unit: "USD" }),
    D.str("currency", "currency", () => "USD"),
    D.measure("rating", "average rating (out of 5)", 2.1, 5, 1),
    D.childCount("reviews_count", "number of reviews", "review"),
    D.bool("in_stock", "in stock", (e) => V.chance(e.h("stock"), 0.82), { filter: "eq" }),
    D.count("stock_quantity", "units in stock", 0, 900),
    productStore,
    D.refName("seller", "seller", productStore),
    D.measure("weight_kg", "weight in kilograms", 0.05, 25, 2, { unit: "kg" }),
    D.cat("color", "colour", W.colours),
    D.date("release_date", "release date", (e) => V.pastDate(e.h("rel"), 10, 2500))
  ],
  series: [D.around("price", "price", productPrice, 0.12, 2)],
  actions: [{
    key: "purchase", label: "place an order for a product", creates: "purchase",
    recordId: (h) => `ORD-${V.chars(h, 10, "0123456789")}`,
    inputs: [
      { key: "quantity", label: "quantity", type: "integer", minimum: 1, maximum: 50, required: true, example: (h) => V.int(h, 1, 3) },
      { key: "shipping_address", label: "shipping address", type: "string", required: true, example: (h) => V.streetAddress(h) },
      { key: "coupon_code", label: "coupon code", type: "string", required: false, example: () => "" }
    ],
    compute: (p, args) => {
      const q = typeof args["quantity"] === "number" ? args["quantity"] : 1
      const price = typeof p?.get("price") === "number" ? p.get("price") as number : 0
      return {
        product_id: p?.id ?? "",
        product_name: p?.name ?? "",
        quantity: q,
        total: Math.round(price * q * 100) / 100,
        currency: "USD",
        status: p?.get("in_stock") === false ? "backordered" : "confirmed",
        estimated_delivery: V.isoDate(V.today + 3 + (q % 4))
      }
    },
    recordAttrs: [
      { key: "product_id", label: "product ID", type: "string", ref: { type: "product", index: () => -1 } },
      { key: "product_name", label: "product", type: "string" },
      { key: "quantity", label: "quantity", type: "integer" },
      { key: "total", label: "order total", type: "number" },
      { key: "currency", label: "currency", type: "string" },
      { key: "status", label: "order status", type: "string" },
      { key: "estimated_delivery", label: "estimated delivery date", type: "string", format: "date" }
    ]
  }]
}

/** Product reviews. */
export const review: EntityDef = {
  type: "review", noun: "review", plural: "reviews", synonyms: ["customer review", "rating", "feedback", "testimonial"], nameLabel: "title",
  size: 0,
  parent: { type: "product", key: "product_id", label: "product", min: 0, max: 6, relation: "reviews" },
  id: D.coded("R", 13, "upper", "review ID", "R2KX8M4Q0B1Z7C"),
  name: (e) => V.pick(["Great value for the price", "Stopped working after a week", "Exactly as described", "Better than expected", "Decent but overpriced", "Would buy again", "Not worth it", "Solid build quality", "Fast shipping, works well", "Disappointed"], e.h("title")),
  searchable: false,
  attrs: [
    D.parentId("product_id", "product ID", "product"),
    D.count("stars", "star rating", 1, 5),
    D.str("author", "reviewer", (e) => V.personName(e.h("author"))),
    D.date("date", "review date", (e) => V.pastDate(e.h("date"), 0, 700)),
    D.bool("verified_purchase", "verified purchase", (e) => V.chance(e.h("vp"), 0.75)),
    D.logCount("helpful_votes", "helpful votes", 0, 3000)
  ]
}

const orderCustomer = D.ref("customer_id", "customer user ID", "user", { inverse: "orders", inverseLabel: "orders" })
const orderShipCity = D.ref("shipping_city_id", "shipping city ID", "city", { fact: false })

/** Orders placed by users. */
export const order: EntityDef = {
  type: "order", noun: "order", plural: "orders", synonyms: ["purchase", "checkout", "sale"], nameLabel: "reference",
  size: 10000,
  id: { label: "order ID", example: "3f2b1c9e-8d4a-4b6f-9a0e-5c7d2e1f0a8b", make: (e, attempt) => V.uuid(e.h(`oid${attempt}`)) },
  name: (e) => `Order ${V.int(e.h("n"), 100000, 999999)}`,
  searchable: false,
  attrs: [
    orderCustomer,
    D.refName("customer", "customer", orderCustomer),
    D.refs("product_ids", "product IDs", "product", 1, 4),
    D.num("total", "order total", (e) => {
      let sum = 0
      for (const i of D.refIndexes(e, "product_ids", "product", 1, 4)) sum += productPrice(e.world.entity("product", i))
      return Math.round(sum * 100) / 100
    }, { filter: "range", unit: "USD" }),
    D.cat("status", "status", W.orderStatuses),
    D.dateTime("placed_at", "order time", (e) => V.dateTimeOn(e.h("at"), V.today - V.int(e.h("ago"), 0, 180))),
    orderShipCity,
    D.refName("shipping_city", "shipping city", orderShipCity)
  ]
}

const shipOrigin = D.ref("origin_city_id", "origin city ID", "city", { fact: false })
const shipDestination = D.ref("destination_city_id", "destination city ID", "city", { fact: false })
const shipOrder = D.ref("order_id", "order ID", "order", { inverse: "shipments", inverseLabel: "shipments" })

/** Parcel shipments (tracking numbers). */
export const shipment: EntityDef = {
  type: "shipment", noun: "shipment", plural: "shipments", synonyms: ["parcel", "package", "delivery", "consignment"], nameLabel: "tracking number",
  size: 8000,
  id: D.coded("1Z", 16, "upper", "tracking number", "1Z999AA10123456784"),
  name: (e) => `Parcel ${V.int(e.h("n"), 1000, 9999)}`,
  searchable: false,
  attrs: [
    D.cat("carrier", "carrier", W.carriers),
    D.cat("status", "status", W.shipmentStatuses),
    shipOrigin,
    D.refName("origin", "origin city", shipOrigin),
    shipDestination,
    D.refName("destination", "destination city", shipDestination),
    D.measure("weight_kg", "weight in kilograms", 0.1, 40, 2, { unit: "kg" }),
    D.date("shipped_date", "ship date", (e) => V.pastDate(e.h("shipped"), 0, 20)),
    D.date("estimated_delivery", "estimated delivery date", (e) => V.isoDate(V.dayNumber(V.pastDate(e.h("shipped"), 0, 20)) + V.int(e.h("eta"), 1, 9))),
    shipOrder
  ]
}

const couponStore = D.ref("store_id", "store ID", "store", { inverse: "coupons", inverseLabel: "coupons" })

/** Discount coupons. */
export const coupon: EntityDef = {
  type: "coupon", noun: "coupon", plural: "coupons", synonyms: ["promo code", "discount code", "voucher", "deal"], nameLabel: "title",
  size: 3000,
  id: { label: "coupon code", example: "SAVE20-XK3F", make: (e, attempt) => `${V.pick(["SAVE", "DEAL", "WELCOME", "SPRING", "VIP", "EXTRA"], e.h("p"))}${V.int(e.h("pct"), 5, 60)}-${V.chars(hash32(`c${attempt}`, e.hash), 4, "ABCDEFGHJKLMNPQRSTUVWXYZ23456789")}` },
  name: (e) => `${V.int(e.h("pct"), 5, 60)}% off ${V.pick(W.productCategories, e.h("cat"))}`,
  attrs: [
    D.int("discount_pct", "discount (%)", (e) => V.int(e.h("pct"), 5, 60), { filter: "range", unit: "%" }),
    couponStore,
    D.refName("store", "store", couponStore),
    D.cat("category", "category", W.productCategories, { gen: (e) => V.pick(W.productCategories, e.h("cat")) }),
    D.date("expires", "expiry date", (e) => V.futureDate(e.h("exp"), -10, 120)),
    D.money("min_spend", "minimum spend", 0.01, 200, "USD"),
    D.count("uses_left", "uses left", 0, 5000)
  ]
}

const uniCity = D.ref("city_id", "city ID", "city", { inverse: "universities", inverseLabel: "universities" })

/** Universities. */
export const university: EntityDef = {
  type: "university", noun: "university", plural: "universities", synonyms: ["college", "school", "institute", "academy"], nameLabel: "name",
  size: 900,
  id: D.numbered("UNI-", 5, "university ID"),
  name: (e) => {
    const c = e.world.name("city", uniCity.ref?.index(e) ?? 0)
    return V.pick([`University of ${c}`, `${c} Institute of Technology`, `${c} State University`, `${V.pick(W.lastNames, e.h("n"))} College`, `${c} School of Economics`], e.h("style"))
  },
  attrs: [
    uniCity,
    D.refName("city", "city", uniCity),
    D.count("founded", "founding year", 1150, 2010),
    D.logCount("students", "number of students", 800, 90000),
    D.int("world_rank", "world ranking", (e) => e.index + 1, { filter: "range" }),
    D.measure("acceptance_rate_pct", "acceptance rate (%)", 4, 92, 1, { unit: "%" }),
    D.money("tuition_usd", "annual tuition", 0.01, 62000, "USD"),
    D.cat("type", "type", ["public", "private"]),
    D.childCount("courses_count", "number of courses offered", "course")
  ]
}

/** Courses offered by universities. */
export const course: EntityDef = {
  type: "course", noun: "course", plural: "courses", synonyms: ["class", "module", "program", "lecture series"], nameLabel: "title",
  size: 0,
  parent: { type: "university", key: "university_id", label: "university", min: 2, max: 12, relation: "courses" },
  id: D.numbered("CRS-", 6, "course ID"),
  name: (e) => `${V.pick(["Introduction to", "Advanced", "Foundations of", "Applied", "Topics in", "Principles of"], e.h("p"))} ${V.pick(W.subjects, e.h("subject"))}`,
  attrs: [
    D.parentId("university_id", "university ID", "university"),
    D.parentName("university", "university", "university"),
    D.cat("subject", "subject", W.subjects, { gen: (e) => V.pick(W.subjects, e.h("subject")) }),
    D.cat("level", "level", ["beginner", "intermediate", "advanced"]),
    D.count("credits", "credits", 2, 10),
    D.count("duration_weeks", "duration in weeks", 4, 16),
    D.str("instructor", "instructor", (e) => V.personName(e.h("instructor"))),
    D.measure("rating", "rating (out of 5)", 3, 5, 1),
    D.money("price", "price", 0.01, 2400, "USD"),
    D.date("start_date", "start date", (e) => V.futureDate(e.h("start"), 5, 150))
  ],
  actions: [{
    key: "enroll", label: "enroll a student in a course", creates: "enrollment",
    recordId: (h) => `ENR-${V.chars(h, 8, "0123456789")}`,
    inputs: [
      { key: "student_name", label: "student name", type: "string", required: true, example: (h) => V.personName(h) },
      { key: "email", label: "student email", type: "string", format: "email", required: true, example: (h) => V.email(V.personName(h), V.mailDomain(V.sub(h, "d")), h) }
    ],
    compute: (c, args) => ({ course_id: c?.id ?? "", course_title: c?.name ?? "", student_name: args["student_name"] ?? "", start_date: c?.get("start_date") ?? "", status: "enrolled" }),
    recordAttrs: [
      { key: "course_id", label: "course ID", type: "string", ref: { type: "course", index: () => -1 } },
      { key: "course_title", label: "course", type: "string" },
      { key: "student_name", label: "student", type: "string" },
      { key: "start_date", label: "start date", type: "string", format: "date" },
      { key: "status", label: "enrollment status", type: "string" }
    ]
  }]
}

/** Recipes. */
export const recipe: EntityDef = {
  type: "recipe", noun: "recipe", plural: "recipes", synonyms: ["dish", "meal idea", "cooking recipe"], nameLabel: "title",
  size: 4000,
  id: D.coded("", 6, "digits", "recipe ID", "716429"),
  name: (e, attempt) => `${V.pick(W.dishAdjectives, D.draw(e, attempt, "adj"))} ${V.pick(W.ingredients, e.h("main"))} ${V.pick(W.dishes, D.draw(e, attempt, "dish"))}`,
  uniqueNames: true,
  attrs: [
    D.cat("cuisine", "cuisine", W.cuisines),
    D.count("prep_minutes", "preparation time (minutes)", 5, 60, { unit: "min" }),
    D.count("cook_minutes", "cooking time (minutes)", 0, 240, { unit: "min" }),
    D.count("servings", "servings", 1, 10),
    D.count("calories", "calories per serving", 90, 1200, { unit: "kcal" }),
    D.cat("difficulty", "difficulty", ["easy", "medium", "hard"]),
    D.measure("rating", "rating (out of 5)", 2.8, 5, 1),
    D.str("author", "author", (e) => V.personName(e.h("author"))),
    D.bool("vegetarian", "vegetarian", (e) => ["Chickpea", "Mushroom", "Lentil", "Tofu", "Pumpkin", "Spinach", "Eggplant", "Quinoa", "Sweet Potato", "Halloumi", "Black Bean", "Cauliflower"].includes(V.pick(W.ingredients, e.h("main"))), { filter: "eq" }),
    D.count("ingredients_count", "number of ingredients", 4, 18)
  ]
}

/** Exercises (common names). */
export const exercise: EntityDef = {
  type: "exercise", noun: "exercise", plural: "exercises", synonyms: ["workout move", "drill", "movement"], nameLabel: "name",
  size: W.exercises.length,
  id: { label: "exercise slug", example: "push-up", make: (e, attempt) => `${V.slug(e.name)}${attempt === 0 ? "" : `-${attempt}`}` },
  name: (e) => W.exercises[e.index] ?? "Exercise",
  attrs: [
    D.cat("muscle_group", "target muscle group", W.muscleGroups),
    D.cat("equipment", "equipment", ["none", "dumbbells", "barbell", "kettlebell", "machine", "resistance band", "pull-up bar", "bench"]),
    D.cat("difficulty", "difficulty", ["beginner", "intermediate", "advanced"]),
    D.measure("calories_per_minute", "calories burned per minute", 3, 14, 1, { unit: "kcal/min" }),
    D.count("recommended_sets", "recommended sets", 2, 5),
    D.count("recommended_reps", "recommended reps", 6, 20)
  ]
}

/** Foods with nutrition facts. */
export const food: EntityDef = {
  type: "food", noun: "food", plural: "foods", synonyms: ["ingredient", "food item", "nutrition entry"], nameLabel: "name",
  size: W.foods.length,
  id: D.coded("FDC-", 6, "digits", "food ID", "FDC-171688"),
  name: (e) => W.foods[e.index] ?? "Food",
  attrs: [
    D.count("calories_per_100g", "calories per 100 g", 15, 720, { unit: "kcal" }),
    D.measure("protein_g", "protein per 100 g", 0, 32, 1, { unit: "g" }),
    D.measure("carbs_g", "carbohydrates per 100 g", 0, 80, 1, { unit: "g" }),
    D.measure("fat_g", "fat per 100 g", 0, 60, 1, { unit: "g" }),
    D.measure("fiber_g", "fibre per 100 g", 0, 12, 1, { unit: "g" }),
    D.cat("food_group", "food group", ["fruit", "vegetable", "grain", "dairy", "protein", "fat", "sweet"])
  ]
}

const drugCondition = D.ref("treats_condition_id", "condition treated (ID)", "condition", { inverse: "treatments", inverseLabel: "drugs that treat it" })

/** Medical conditions (common names, invented codes). */
export const condition: EntityDef = {
  type: "condition", noun: "medical condition", plural: "medical conditions", synonyms: ["disease", "illness", "disorder", "diagnosis"], nameLabel: "name",
  size: W.conditions.length,
  id: { label: "condition code", example: "J45.9", make: (e, attempt) => `${"ABCDEFGHIJKLMN"[(e.hash + attempt) % 14]}${String(V.int(e.h(`c${attempt}`), 10, 99))}.${V.int(e.h("d"), 0, 9)}` },
  name: (e) => W.conditions[e.index] ?? "Condition",
  attrs: [
    D.cat("specialty", "medical specialty", W.specialties),
    D.measure("prevalence_pct", "prevalence (%)", 0.1, 30, 1, { unit: "%" }),
    D.bool("chronic", "chronic", (e) => V.chance(e.h("chronic"), 0.5)),
    D.list("symptoms", "common symptoms", (e) => ["fatigue", "fever", "headache", "cough", "pain", "rash", "nausea", "dizziness", "shortness of breath", "itching"].filter((_, k) => V.chance(e.h(`s${k}`), 0.3))),
    D.count("typical_onset_age", "typical age of onset", 2, 70)
  ]
}

/** Medicines. */
export const drug: EntityDef = {
  type: "drug", noun: "drug", plural: "drugs", synonyms: ["medication", "medicine", "pharmaceutical", "prescription"], nameLabel: "brand name",
  size: 800,
  id: D.numbered("NDC-", 7, "drug code"),
  name: (e) => `${V.pick(W.brandHeads, e.h("a"))}${V.pick(["tro", "va", "ze", "li", "mo", "ra", "xo"], e.h("b"))}${V.pick(["lix", "pril", "statin", "mab", "zole", "cillin", "dine", "fen", "sartan", "vir"], e.h("c"))}`,
  attrs: [
    D.cat("drug_class", "drug class", W.drugClasses),
    D.str("generic_name", "generic name", (e) => `${V.pick(W.chemPrefixes, e.h("g1"))}${V.pick(["oxamine", "aprazole", "icillin", "orphine", "azepam", "olol", "adine"], e.h("g2"))}`),
    D.cat("dosage_form", "dosage form", ["tablet", "capsule", "syrup", "injection", "inhaler", "cream", "drops"]),
    D.count("strength_mg", "strength (mg)", 1, 1000, { unit: "mg" }),
    D.bool("prescription_required", "prescription required", (e) => V.chance(e.h("rx"), 0.7), { filter: "eq" }),
    D.str("manufacturer", "manufacturer", (e) => V.companyName(e.h("mfr"))),
    D.count("approved", "approval year", 1960, 2024),
    drugCondition,
    D.refName("treats", "condition treated", drugCondition)
  ]
}

const doctorCity = D.ref("city_id", "city ID", "city", { inverse: "doctors", inverseLabel: "doctors" })

/** Doctors (NPI-style ids). */
export const doctor: EntityDef = {
  type: "doctor", noun: "doctor", plural: "doctors", synonyms: ["physician", "clinician", "specialist", "practitioner", "GP"], nameLabel: "name",
  size: 3000,
  id: D.coded("1", 9, "digits", "NPI number", "1234567893"),
  name: (e, attempt) => `Dr. ${V.personName(D.draw(e, attempt, "name"), attempt >= 4)}`,
  uniqueNames: true,
  attrs: [
    D.cat("specialty", "specialty", W.specialties),
    doctorCity,
    D.refName("city", "city", doctorCity),
    D.str("clinic", "clinic", (e) => `${V.placeName(e.h("clinic"))} ${V.pick(["Medical Center", "General Hospital", "Health Clinic", "Family Practice"], e.h("ck"))}`),
    D.count("years_experience", "years of experience", 1, 40),
    D.measure("rating", "patient rating (out of 5)", 2.9, 5, 1),
    D.bool("accepting_new_patients", "accepting new patients", (e) => V.chance(e.h("new"), 0.55), { filter: "eq" }),
    D.str("phone", "phone number", (e) => V.phone(e.h("phone")))
  ]
}

const makeOf = (e: EntityCore): string => V.pick(W.carMakes, e.h("make"))

/** Car models. */
export const carModel: EntityDef = {
  type: "car_model", noun: "car model", plural: "car models", synonyms: ["model", "vehicle model", "car"], nameLabel: "name",
  size: 600,
  id: D.numbered("MDL-", 5, "model ID"),
  name: (e) => `${makeOf(e)} ${V.pick(W.titleNouns, e.h("model"))} ${V.pick(["", "GT", "Sport", "EV", "Hybrid", "X"], e.h("trim"))}`.trim(),
  attrs: [
    D.cat("make", "make", W.carMakes, { gen: makeOf }),
    D.cat("body_style", "body style", W.bodyStyles),
    D.cat("fuel", "fuel type", W.fuels),
    D.money("msrp", "starting price (MSRP)", 14000, 160000, "USD"),
    D.count("horsepower", "horsepower", 70, 780, { unit: "hp" }),
    D.count("seats", "seats", 2, 8),
    D.count("range_km", "range in kilometres", 250, 1100, { unit: "km" }),
    D.count("launch_year", "launch year", 2005, 2024)
  ]
}

const dealerCity = D.ref("city_id", "city ID", "city", { inverse: "dealers", inverseLabel: "car dealers" })

/** Car dealerships. */
export const dealer: EntityDef = {
  type: "dealer", noun: "car dealer", plural: "car dealers", synonyms: ["dealership", "car lot", "auto dealer"], nameLabel: "name",
  size: 900,
  id: D.numbered("DLR-", 5, "dealer ID"),
  name: (e) => `${e.world.name("city", dealerCity.ref?.index(e) ?? 0)} ${makeOf(e)} ${V.pick(["Motors", "Auto", "Cars", "Automotive"], e.h("k"))}`,
  attrs: [
    dealerCity,
    D.refName("city", "city", dealerCity),
    D.cat("brand", "brand sold", W.carMakes, { gen: makeOf }),
    D.measure("rating", "rating (out of 5)", 2.5, 5, 1),
    D.str("phone", "phone number", (e) => V.phone(e.h("phone"))),
    D.str("address", "address", (e) => V.streetAddress(e.h("addr")))
  ]
}

const vehicleModel = D.ref("model_id", "model ID", "car_model", { inverse: "vehicles", inverseLabel: "vehicles for sale" })
const vehicleDealer = D.ref("dealer_id", "dealer ID", "dealer", { inverse: "inventory", inverseLabel: "vehicles in stock" })

/** Individual vehicles for sale (VINs). */
export const vehicle: EntityDef = {
  type: "vehicle", noun: "vehicle", plural: "vehicles", synonyms: ["car", "used car", "automobile", "listing"], nameLabel: "title",
  size: 5000,
  id: { label: "VIN", example: "1HGCM82633A004352", make: (e, attempt) => V.vin(e.h(`vin${attempt}`)) },
  name: (e) => `${V.int(e.h("year"), 2008, 2024)} ${e.world.name("car_model", vehicleModel.ref?.index(e) ?? 0)}`,
  attrs: [
    vehicleModel,
    D.refName("model", "model", vehicleModel),
    D.int("year", "model year", (e) => V.int(e.h("year"), 2008, 2024), { filter: "range" }),
    D.count("mileage_km", "mileage in kilometres", 0, 240000, { unit: "km" }),
    D.cat("color", "colour", W.colours),
    D.money("price", "asking price", 3500, 140000, "USD"),
    D.cat("transmission", "transmission", ["automatic", "manual", "CVT"]),
    vehicleDealer,
    D.refName("dealer", "dealer", vehicleDealer)
  ]
}

const deviceOwner = D.ref("owner_id", "owner user ID", "user", { inverse: "devices", inverseLabel: "smart-home devices" })

/** Smart-home devices. */
export const device: EntityDef = {
  type: "device", noun: "device", plural: "devices", synonyms: ["smart device", "IoT device", "gadget", "sensor"], nameLabel: "name",
  size: 4000,
  id: { label: "device ID (MAC)", example: "a4:c1:38:9f:22:0b", make: (e, attempt) => V.mac(e.h(`mac${attempt}`)) },
  name: (e) => `${V.pick(["Kitchen", "Living Room", "Bedroom", "Garage", "Office", "Hallway", "Porch", "Basement"], e.h("room"))} ${V.pick(W.deviceKinds, e.h("kind"))}`,
  attrs: [
    D.cat("kind", "device type", W.deviceKinds, { gen: (e) => V.pick(W.deviceKinds, e.h("kind")) }),
    D.str("model", "model", (e) => `${V.coined(e.h("brand"))} ${V.letters(e.h("m"), 2)}-${V.int(e.h("mn"), 100, 990)}`),
    D.str("firmware", "firmware version", (e) => `${V.int(e.h("f1"), 1, 6)}.${V.int(e.h("f2"), 0, 12)}.${V.int(e.h("f3"), 0, 40)}`),
    D.count("battery_pct", "battery level (%)", 3, 100, { unit: "%" }),
    D.bool("online", "online", (e) => V.chance(e.h("online"), 0.85), { filter: "eq" }),
    D.dateTime("last_seen", "last seen", (e) => V.dateTimeOn(e.h("seen"), V.today - V.int(e.h("sa"), 0, 3))),
    deviceOwner
  ],
  series: [D.around("power_w", "power draw (W)", (e) => V.float(e.h("pw"), 0.5, 60), 0.5, 1, "W")],
  actions: [{
    key: "command", label: "send a command to a device", creates: "device_command",
    recordId: (h) => `cmd_${V.hex(h, 12)}`,
    inputs: [
      { key: "command", label: "command", type: "string", values: ["turn_on", "turn_off", "reboot", "set_level", "lock", "unlock"], required: true, example: (h) => V.pick(["turn_on", "turn_off", "reboot"], h) },
      { key: "level", label: "level (0-100) for set_level", type: "integer", minimum: 0, maximum: 100, required: false, example: (h) => V.int(h, 10, 90) }
    ],
    compute: (d, args) => ({
      device_id: d?.id ?? "",
      command: args["command"] ?? "",
      result: d?.get("online") === false ? "queued (device offline)" : "executed",
      executed_at: V.dateTimeOn(0, V.today, 12, 12)
    }),
    recordAttrs: [
      { key: "device_id", label: "device ID", type: "string", ref: { type: "device", index: () => -1 } },
      { key: "command", label: "command", type: "string" },
      { key: "result", label: "result", type: "string" },
      { key: "executed_at", label: "execution time", type: "string", format: "date-time" }
    ]
  }]
}

/** All commerce and everyday-life types. */
export const commerceTypes: ReadonlyArray<EntityDef> = [store, product, review, order, shipment, coupon, university, course, recipe, exercise, food, condition, drug, doctor, carModel, dealer, vehicle, device]
