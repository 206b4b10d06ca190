/**
 * The 52 categories of the generated library: RapidAPI's category names (49 of them, as in ToolEnv2404) plus three
 * of ours, their share of the 50,011 interfaces (long-tailed; the four largest ≈ 41%, spec §6), and what each
 * category's providers cover (entity types, utilities, standalone actions).
 */

/** One category of the library. */
export interface Category {
  readonly name: string
  /** What its providers are about, in a phrase (`sports data`). */
  readonly domain: string
  /** Entity types its providers serve, most common first. */
  readonly types: ReadonlyArray<string>
  /** Utility APIs its providers may offer. */
  readonly utilities: ReadonlyArray<string>
  /** Standalone actions its providers may offer. */
  readonly actions: ReadonlyArray<string>
  /** Words its provider brands are made from. */
  readonly stems: ReadonlyArray<string>
}

/** The library size of the paper (spec §6). */
export const libraryTarget = 50_011

/** Shares of the four largest categories (sum 0.41, spec §6 / Figure 6). */
const headShares: ReadonlyArray<readonly [string, number]> = [["Sports", 0.112], ["Data", 0.104], ["Finance", 0.1], ["Social", 0.094]]

/** Categories in the order of their size. */
export const categories: ReadonlyArray<Category> = [
  { name: "Sports", domain: "sports data", types: ["team", "player", "match", "league"], utilities: [], actions: [], stems: ["Score", "Goal", "Sport", "League", "Match", "Pitch", "Arena", "Champion", "Kick", "Play", "Stat", "Fan"] },
  { name: "Data", domain: "data enrichment and lookup", types: ["domain", "company", "dataset", "ip_address", "country", "user", "city"], utilities: ["validate_email", "validate_phone", "text_stats", "age", "fingerprint"], actions: [], stems: ["Data", "Lookup", "Info", "Enrich", "Open", "Record", "Fact", "Source", "Index", "Query", "Base", "Insight"] },
  { name: "Finance", domain: "financial market data", types: ["stock", "crypto", "currency", "fund", "company", "bank"], utilities: ["loan"], actions: [], stems: ["Fin", "Market", "Stock", "Trade", "Quote", "Capital", "Ledger", "Invest", "Wealth", "Money", "Ticker", "Bull"] },
  { name: "Social", domain: "social media", types: ["user", "post", "hashtag", "comment"], utilities: ["sentiment"], actions: ["publish_post"], stems: ["Social", "Buzz", "Feed", "Friend", "Share", "Trend", "Chirp", "Connect", "Follow", "Post", "Circle", "Vibe"] },
  { name: "Business", domain: "business information", types: ["company", "employee", "invoice", "project"], utilities: [], actions: [], stems: ["Biz", "Corp", "Enterprise", "Office", "Firm", "Venture", "Trade", "Company", "Work", "Pro"] },
  { name: "Tools", domain: "developer tools", types: ["domain"], utilities: ["qr_code", "base64", "slugify", "unit_convert", "fingerprint", "password_strength"], actions: ["shorten_url"], stems: ["Tool", "Util", "Kit", "Dev", "Handy", "Smart", "Quick", "Swiss", "Gear", "Box"] },
  { name: "Other", domain: "miscellaneous", types: ["book", "recipe", "country", "game", "asteroid"], utilities: ["quote", "age"], actions: [], stems: ["Misc", "Random", "Fun", "Daily", "Any", "Omni", "World", "Things", "Mixed", "Hub"] },
  { name: "Entertainment", domain: "entertainment", types: ["movie", "tv_show", "event", "actor", "game"], utilities: ["quote"], actions: [], stems: ["Fun", "Show", "Star", "Stage", "Screen", "Joy", "Live", "Play", "Spot", "Hype"] },
  { name: "eCommerce", domain: "e-commerce", types: ["product", "review", "order", "store", "coupon"], utilities: [], actions: [], stems: ["Shop", "Cart", "Buy", "Deal", "Store", "Market", "Price", "Basket", "Mall", "Checkout"] },
  { name: "Advertising", domain: "advertising and marketing", types: ["campaign", "company"], utilities: [], actions: [], stems: ["Ad", "Promo", "Reach", "Click", "Brand", "Pixel", "Boost", "Target", "Funnel", "Lead"] },
  { name: "News_Media", domain: "news", types: ["article", "publisher", "company"], utilities: ["sentiment"], actions: [], stems: ["News", "Press", "Headline", "Wire", "Daily", "Report", "Media", "Story", "Brief", "Beat"] },
  { name: "Education", domain: "education", types: ["course", "university", "book"], utilities: [], actions: [], stems: ["Edu", "Learn", "Study", "Campus", "Scholar", "Academy", "Class", "Tutor", "Course", "Mentor"] },
  { name: "Location", domain: "location and geography", types: ["city", "country", "poi", "ip_address"], utilities: ["distance"], actions: [], stems: ["Geo", "Place", "Locate", "Map", "Atlas", "Where", "Spot", "Globe", "Compass", "Region"] },
  { name: "Artificial_Intelligence_Machine_Learning", domain: "AI and machine learning", types: ["ml_model", "dataset"], utilities: ["sentiment", "detect_language", "keywords", "detect_objects"], actions: [], stems: ["AI", "Neural", "Mind", "Cortex", "Deep", "Brain", "Model", "Cognit", "Tensor", "Sense"] },
  { name: "Gaming", domain: "video games and esports", types: ["game", "tournament"], utilities: [], actions: [], stems: ["Game", "Play", "Quest", "Level", "Pixel", "Arcade", "Loot", "Frag", "Guild", "Boss"] },
  { name: "Database", domain: "reference databases", types: ["dataset", "company", "country", "city", "chemical"], utilities: [], actions: [], stems: ["DB", "Base", "Store", "Table", "Record", "Vault", "Row", "Schema", "Catalog", "Registry"] },
  { name: "Video_Images", domain: "video and images", types: ["video", "channel"], utilities: ["detect_objects", "ocr"], actions: [], stems: ["Video", "Clip", "Frame", "Pic", "Image", "Tube", "Snap", "Lens", "Reel", "Pixel"] },
  { name: "Cybersecurity", domain: "cybersecurity intelligence", types: ["vulnerability", "ip_address", "domain"], utilities: ["password_strength"], actions: [], stems: ["Secure", "Shield", "Guard", "Threat", "Cyber", "Sentinel", "Fort", "Breach", "Safe", "Armor"] },
  { name: "Commerce", domain: "commerce and retail", types: ["product", "store", "shipment", "order", "coupon"], utilities: [], actions: [], stems: ["Retail", "Commerce", "Merchant", "Sale", "Trade", "Goods", "Vendor", "Bazaar", "Outlet", "Supply"] },
  { name: "Business_Software", domain: "business software", types: ["ticket", "project", "employee", "invoice"], utilities: [], actions: ["open_ticket"], stems: ["Desk", "Flow", "Work", "Team", "Task", "Ops", "Suite", "Cloud", "Hub", "Stack"] },
  { name: "Communication", domain: "messaging and communication", types: ["user", "email_message"], utilities: ["validate_phone"], actions: ["send_sms", "send_email"], stems: ["Talk", "Chat", "Message", "Signal", "Voice", "Ping", "Relay", "Call", "Link", "Notify"] },
  { name: "Media", domain: "media", types: ["video", "article", "channel", "movie"], utilities: [], actions: [], stems: ["Media", "Cast", "Stream", "Broadcast", "Studio", "Channel", "Watch", "Content", "Air", "Wave"] },
  { name: "Financial", domain: "financial services", types: ["stock", "company", "payment", "invoice", "currency"], utilities: ["loan", "validate_iban"], actions: [], stems: ["Finance", "Fiscal", "Account", "Credit", "Budget", "Tax", "Asset", "Fund", "Yield", "Bank"] },
  { name: "Text_Analysis", domain: "text analysis", types: [], utilities: ["sentiment", "detect_language", "text_stats", "keywords", "fingerprint"], actions: [], stems: ["Text", "Word", "Lingo", "Parse", "Lexi", "Prose", "Token", "Syntax", "Read", "Semantic"] },
  { name: "Search", domain: "web search", types: ["web_page", "domain"], utilities: [], actions: [], stems: ["Search", "Find", "Seek", "Crawl", "Index", "Scout", "Hunt", "Spider", "Query", "Explore"] },
  { name: "Travel", domain: "travel", types: ["hotel", "flight", "airport", "airline", "city"], utilities: [], actions: [], stems: ["Trip", "Travel", "Voyage", "Jet", "Stay", "Tour", "Wander", "Journey", "Roam", "Nomad"] },
  { name: "Weather", domain: "weather", types: ["city", "weather_station"], utilities: ["unit_convert"], actions: [], stems: ["Weather", "Sky", "Climate", "Storm", "Sun", "Cloud", "Forecast", "Rain", "Breeze", "Meteo"] },
  { name: "Food", domain: "food and dining", types: ["recipe", "restaurant", "food"], utilities: [], actions: [], stems: ["Food", "Chef", "Recipe", "Taste", "Dish", "Kitchen", "Bite", "Yum", "Menu", "Spice"] },
  { name: "Music", domain: "music", types: ["song", "artist", "album"], utilities: [], actions: [], stems: ["Music", "Tune", "Beat", "Song", "Sound", "Melody", "Rhythm", "Chord", "Lyric", "Vinyl"] },
  { name: "Email", domain: "email", types: ["email_message", "user"], utilities: ["validate_email"], actions: ["send_email"], stems: ["Mail", "Inbox", "Post", "Letter", "Envelope", "Send", "Courier", "Mailbox", "Dispatch", "Reply"] },
  { name: "Translation", domain: "translation", types: [], utilities: ["translate", "detect_language"], actions: [], stems: ["Lingua", "Translate", "Polyglot", "Babel", "Lang", "Tongue", "Glot", "Word", "Speak", "Locale"] },
  { name: "Mapping", domain: "maps and routing", types: ["poi", "city", "country"], utilities: ["distance"], actions: [], stems: ["Map", "Route", "Nav", "Geo", "Path", "Tile", "Carto", "Way", "Grid", "Trail"] },
  { name: "Transportation", domain: "transportation", types: ["transit_line", "station", "flight", "vehicle"], utilities: [], actions: [], stems: ["Transit", "Ride", "Move", "Metro", "Route", "Commute", "Fleet", "Motion", "Rail", "Drive"] },
  { name: "Health_and_Fitness", domain: "health and fitness", types: ["exercise", "food"], utilities: ["bmi"], actions: [], stems: ["Fit", "Health", "Well", "Vital", "Gym", "Pulse", "Active", "Body", "Strong", "Move"] },
  { name: "Movies", domain: "movies and TV", types: ["movie", "actor", "tv_show"], utilities: [], actions: [], stems: ["Movie", "Film", "Cinema", "Reel", "Flick", "Screen", "Scene", "Studio", "Picture", "Marquee"] },
  { name: "Visual_Recognition", domain: "computer vision", types: [], utilities: ["detect_objects", "ocr"], actions: [], stems: ["Vision", "Sight", "Eye", "Lens", "Optic", "Detect", "Scan", "Recog", "Visual", "Iris"] },
  { name: "Monitoring", domain: "uptime monitoring", types: ["monitor", "domain"], utilities: [], actions: [], stems: ["Uptime", "Monitor", "Watch", "Pulse", "Ping", "Status", "Alert", "Beacon", "Health", "Probe"] },
  { name: "Medical", domain: "medical information", types: ["drug", "condition", "doctor"], utilities: ["bmi"], actions: [], stems: ["Med", "Health", "Care", "Clinic", "Rx", "Cure", "Pharma", "Doc", "Vita", "Heal"] },
  { name: "Science", domain: "science", types: ["chemical", "asteroid"], utilities: ["unit_convert"], actions: [], stems: ["Sci", "Lab", "Atom", "Quantum", "Nova", "Cosmos", "Element", "Orbit", "Theory", "Research"] },
  { name: "Logistics", domain: "logistics and shipping", types: ["shipment", "order"], utilities: [], actions: ["create_label"], stems: ["Ship", "Freight", "Cargo", "Parcel", "Track", "Route", "Haul", "Deliver", "Dispatch", "Post"] },
  { name: "SMS", domain: "SMS messaging", types: [], utilities: ["validate_phone"], actions: ["send_sms"], stems: ["SMS", "Text", "Msg", "Notify", "Alert", "Pager", "Beep", "Signal", "Short", "Mobile"] },
  { name: "Events", domain: "events and ticketing", types: ["event", "venue"], utilities: [], actions: [], stems: ["Event", "Ticket", "Gig", "Fest", "Venue", "Show", "Happen", "Meetup", "Scene", "Stage"] },
  { name: "Devices", domain: "smart devices", types: ["device"], utilities: [], actions: [], stems: ["Device", "IoT", "Smart", "Gadget", "Sensor", "Home", "Hub", "Link", "Node", "Thing"] },
  { name: "Payments", domain: "payments", types: ["payment", "currency"], utilities: ["validate_iban"], actions: [], stems: ["Pay", "Wallet", "Checkout", "Charge", "Coin", "Cash", "Transfer", "Settle", "Card", "Remit"] },
  { name: "Energy", domain: "energy", types: ["power_plant", "charging_station"], utilities: [], actions: [], stems: ["Energy", "Power", "Volt", "Grid", "Watt", "Solar", "Charge", "Amp", "Spark", "Current"] },
  { name: "Cryptography", domain: "cryptography and crypto assets", types: ["crypto"], utilities: ["fingerprint", "base64", "password_strength"], actions: [], stems: ["Crypto", "Cipher", "Hash", "Key", "Block", "Chain", "Secure", "Vault", "Sig", "Proof"] },
  { name: "Jobs", domain: "jobs and recruiting", types: ["job", "company"], utilities: [], actions: [], stems: ["Job", "Career", "Hire", "Talent", "Work", "Recruit", "Staff", "Gig", "Role", "Resume"] },
  { name: "Storage", domain: "file storage", types: ["file"], utilities: [], actions: [], stems: ["Store", "Drive", "Vault", "Box", "Cloud", "Archive", "Bucket", "Locker", "Stash", "Save"] },
  { name: "Real_Estate", domain: "real estate", types: ["property", "city"], utilities: ["loan"], actions: [], stems: ["Home", "Estate", "Realty", "Nest", "Property", "Dwell", "Roof", "Key", "Abode", "Haven"] },
  { name: "Automotive", domain: "automotive", types: ["vehicle", "car_model", "dealer"], utilities: [], actions: [], stems: ["Auto", "Car", "Motor", "Drive", "Wheel", "Garage", "Torque", "Gear", "Road", "Rev"] },
  { name: "Cryptocurrency", domain: "cryptocurrency markets", types: ["crypto", "crypto_exchange"], utilities: [], actions: [], stems: ["Coin", "Token", "Chain", "Block", "Crypto", "Satoshi", "Moon", "Hodl", "Defi", "Ledger"] },
  { name: "Reward", domain: "rewards and coupons", types: ["coupon", "store"], utilities: [], actions: [], stems: ["Reward", "Perk", "Bonus", "Point", "Loyal", "Cashback", "Gift", "Treat", "Earn", "Redeem"] }
]

/** The three categories that are ours (not in ToolEnv2404's 49). */
export const ourCategories: ReadonlyArray<string> = ["Real_Estate", "Automotive", "Cryptocurrency"]

/**
 * Interfaces per category for a library of `total` interfaces: the four head categories take their fixed shares,
 * the other 48 a power-law tail (weight (rank + 6)^-1.25); rounding by largest remainder so the sum is exact.
 */
export const categoryQuotas = (total: number = libraryTarget): ReadonlyArray<readonly [string, number]> => {
  const headSum = headShares.reduce((a, [, s]) => a + s, 0)
  const tail = categories.slice(headShares.length)
  const tailWeights = tail.map((_, k) => (k + 7) ** -1.25)
  const tailSum = tailWeights.reduce((a, b) => a + b, 0)
  const shares = [
    ...headShares.map(([, s]) => s),
    ...tailWeights.map((w) => ((1 - headSum) * w) / tailSum)
  ]
  const raw = shares.map((s) => s * total)
  const floors = raw.map(Math.floor)
  let left = total - floors.reduce((a, b) => a + b, 0)
  const order = raw.map((r, i) => [r - Math.floor(r), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1])
  for (const [, i] of order) {
    if (left <= 0) break
    floors[i] = (floors[i] ?? 0) + 1
    left--
  }
  return categories.map((c, i) => [c.name, floors[i] ?? 0] as const)
}
