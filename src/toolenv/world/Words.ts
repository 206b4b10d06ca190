/**
 * Vocabulary of the generated world: name parts, nouns and labels from which entity names, tool names and
 * descriptions are composed. Plain data; every list is indexed by seeded hashes, so its order is part of the world.
 */

/** Given names from many cultures, so generated people do not all sound alike. */
export const firstNames: ReadonlyArray<string> = [
  "Ada", "Aiden", "Aisha", "Akira", "Alejandro", "Alessia", "Alice", "Amara", "Amir", "Ana", "Anders", "Andrea",
  "Anika", "Ansel", "Arjun", "Astrid", "Aurora", "Ayaan", "Beatriz", "Ben", "Bianca", "Bilal", "Bruno", "Caleb",
  "Camila", "Carlos", "Carmen", "Chen", "Chiara", "Chloe", "Clara", "Conor", "Dalia", "Daniel", "Daria", "David",
  "Diego", "Dmitri", "Elena", "Eli", "Elif", "Elijah", "Elin", "Emeka", "Emil", "Emma", "Enzo", "Esther", "Ethan",
  "Eva", "Fatima", "Felix", "Finn", "Freya", "Gabriel", "Giulia", "Grace", "Hana", "Hannah", "Haruto", "Hassan",
  "Helena", "Hiro", "Hugo", "Ibrahim", "Ines", "Ingrid", "Isaac", "Isabel", "Ivan", "Jade", "Jamal", "James",
  "Javier", "Jin", "Joao", "Jonas", "Jorge", "Julia", "Julian", "Kai", "Kamala", "Karim", "Kasia", "Kenji", "Kofi",
  "Lara", "Laura", "Layla", "Leah", "Leila", "Leo", "Liam", "Lina", "Lior", "Lucas", "Lucia", "Luis", "Luka", "Maya",
  "Malik", "Marco", "Mariam", "Marta", "Mateo", "Matteo", "Mei", "Mia", "Miguel", "Mila", "Mohammed", "Nadia",
  "Naomi", "Nathan", "Nia", "Nico", "Nikolai", "Nina", "Noah", "Nora", "Olga", "Oliver", "Omar", "Oscar", "Paolo",
  "Pedro", "Priya", "Rafael", "Rahul", "Ravi", "Rei", "Rosa", "Ruby", "Sakura", "Samir", "Sara", "Sebastian",
  "Sienna", "Sofia", "Sora", "Stefan", "Sven", "Tariq", "Tess", "Theo", "Thiago", "Tomas", "Valentina", "Vera",
  "Victor", "Wei", "Xavier", "Yara", "Yasmin", "Yuki", "Yusuf", "Zara", "Zoe", "Abebe", "Adaeze", "Aleksandra",
  "Amelie", "Anton", "Aria", "Bao", "Bjorn", "Cyrus", "Dara", "Desmond", "Elias", "Farah", "Gideon", "Hamid",
  "Imani", "Jasper", "Kaito", "Kwame", "Lena", "Mads", "Marisol", "Mateus", "Nadim", "Oksana", "Parisa", "Quentin",
  "Renata", "Rohan", "Saoirse", "Selin", "Tamsin", "Tendai", "Ulla", "Wanjiru", "Yosef", "Zainab", "Zhen", "Ines",
  "Arturo", "Beatrice", "Cormac", "Delphine", "Emre", "Fiona", "Goran", "Hugo", "Ilse", "Jovan", "Keira", "Lorenzo",
  "Maeve", "Niamh", "Orla", "Pablo", "Rania", "Soren", "Talia", "Umar", "Viktor", "Wren", "Ximena", "Yoshiro"
]

/** Family names from many cultures. */
export const lastNames: ReadonlyArray<string> = [
  "Abbott", "Adeyemi", "Agarwal", "Ahmed", "Alvarez", "Andersen", "Araujo", "Arslan", "Bailey", "Bakker", "Banerjee",
  "Barros", "Becker", "Bennett", "Bergstrom", "Bianchi", "Blake", "Bondarenko", "Brennan", "Brooks", "Bui", "Caldwell",
  "Campos", "Carter", "Castillo", "Chandra", "Chang", "Chavez", "Chen", "Choi", "Cohen", "Costa", "Cruz", "Dahl",
  "Das", "Davies", "Delgado", "Diaz", "Dimitrov", "Dubois", "Duarte", "Eklund", "Ellis", "Eriksen", "Esposito",
  "Farouk", "Fernandes", "Ferrari", "Fischer", "Fitzgerald", "Flores", "Foster", "Fujita", "Gallagher", "Garcia",
  "Gashi", "Gonzalez", "Gordon", "Greco", "Gupta", "Haddad", "Hagen", "Hall", "Hansen", "Harper", "Hashemi", "Hayes",
  "Herrera", "Hoffman", "Holm", "Hosseini", "Huang", "Hughes", "Ibrahim", "Ivanova", "Iyer", "Jansen", "Jensen",
  "Jimenez", "Johansson", "Joshi", "Kang", "Kapoor", "Karimi", "Kato", "Keller", "Khan", "Kim", "Kiplagat",
  "Kowalski", "Kruger", "Kumar", "Laine", "Lambert", "Larsen", "Le", "Leblanc", "Lee", "Lehmann", "Li", "Lindqvist",
  "Liu", "Lombardi", "Lopez", "Lund", "Madsen", "Mahmoud", "Marin", "Marino", "Martens", "Martinez", "Matsumoto",
  "Mehta", "Mendes", "Meyer", "Molina", "Moreau", "Moreno", "Morgan", "Murphy", "Mwangi", "Nakamura", "Navarro",
  "Nguyen", "Nielsen", "Novak", "Nowak", "Obi", "Okafor", "Okonkwo", "Olsen", "Ortiz", "Osei", "Ozturk", "Park",
  "Patel", "Pereira", "Perez", "Petrov", "Pham", "Popescu", "Price", "Quinn", "Rahman", "Ramos", "Rao", "Reyes",
  "Ribeiro", "Richter", "Rivera", "Romano", "Rossi", "Russo", "Saito", "Salazar", "Sanchez", "Santos", "Sato",
  "Schmidt", "Schneider", "Serrano", "Shah", "Sharma", "Silva", "Singh", "Sokolov", "Sorensen", "Suarez", "Sullivan",
  "Suzuki", "Takahashi", "Tan", "Tanaka", "Taylor", "Thompson", "Torres", "Tran", "Turner", "Ueda", "Usman",
  "Valdez", "Van Dijk", "Vargas", "Vasquez", "Verma", "Vogel", "Volkov", "Wagner", "Walsh", "Wang", "Watanabe",
  "Weber", "Wilson", "Wong", "Wu", "Xu", "Yamamoto", "Yang", "Yilmaz", "Young", "Zhang", "Zhao", "Zhou", "Zimmermann",
  "Achterberg", "Balogun", "Cardoso", "Demir", "Eze", "Falk", "Grimaldi", "Horvath", "Ishikawa", "Jovanovic",
  "Kaur", "Lindgren", "Mbeki", "Nascimento", "Oyelaran", "Pajari", "Quiroga", "Rasmussen", "Szabo", "Takeda",
  "Uchenna", "Varga", "Whitaker", "Yoon", "Zielinski", "Aldana", "Bhatt", "Castell", "Dunmore", "Everly", "Faulkner",
  "Hargrove", "Kessler", "Marlow", "Pemberton", "Radcliffe", "Stanton", "Thorne", "Winslow", "Ashby", "Crane"
]

/** First syllables of invented place names. */
export const placeRoots: ReadonlyArray<string> = [
  "Ash", "Bel", "Black", "Bright", "Brook", "Cal", "Cam", "Carr", "Clear", "Cold", "Crest", "Dun", "East", "Elm",
  "Fair", "Fal", "Fern", "Glen", "Gold", "Green", "Hal", "Har", "Hart", "Hazel", "High", "Holly", "Iron", "Kings",
  "Lang", "Lin", "Lock", "Long", "Mar", "Mead", "Mil", "Moss", "Nor", "Oak", "Pen", "Pine", "Quarry", "Raven", "Red",
  "Ros", "Rye", "Salt", "Sand", "Shel", "Silver", "Stan", "Stone", "Sum", "Thorn", "Wal", "West", "Whit", "Wil",
  "Win", "Wood", "Wyn", "Alder", "Amber", "Bram", "Cedar", "Copper", "Dray", "Ember", "Frost", "Gale", "Heron"
]

/** Endings of invented place names. */
export const placeSuffixes: ReadonlyArray<string> = [
  "ford", "ton", "bury", "field", "haven", "mouth", "wick", "dale", "port", "ville", "stead", "bridge", "chester",
  "moor", "ridge", "worth", "brook", "by", "ham", "ley", "mere", "shire", "gate", "well", "crest", "vale", "holm"
]

/** Romance-style invented place names, to mix with the English-style ones. */
export const placeLatin: ReadonlyArray<string> = [
  "Alvera", "Bellamar", "Castelnovo", "Dorada", "Estrela", "Florenza", "Girona Alta", "Lucerna", "Marbella Vieja",
  "Montalvo", "Nuevaterra", "Palmera", "Porto Azul", "Riovista", "Sabinar", "Solmira", "Terrafina", "Valdoro",
  "Vellanova", "Zaragoza Nueva", "Almara", "Benaluz", "Costarena", "Encinar", "Ferrana", "Lumiar", "Mirasol",
  "Olivenza", "Quintanar", "Rocaverde", "Serralta", "Torrelumen", "Villaclara", "Aguasol", "Bravona", "Cieloro"
]

/** Prefixes that turn a root into a place name (`Port Ashford`, `Lake Marlow`). */
export const placePrefixes: ReadonlyArray<string> = ["Port", "New", "Lake", "Mount", "North", "South", "East", "West", "San", "Santa", "Fort", "Saint"]

/** Countries of the world model: name, ISO alpha-2, ISO alpha-3, currency code, continent. */
export const countries: ReadonlyArray<readonly [string, string, string, string, string]> = [
  ["United States", "US", "USA", "USD", "North America"], ["Canada", "CA", "CAN", "CAD", "North America"],
  ["Mexico", "MX", "MEX", "MXN", "North America"], ["Brazil", "BR", "BRA", "BRL", "South America"],
  ["Argentina", "AR", "ARG", "ARS", "South America"], ["Chile", "CL", "CHL", "CLP", "South America"],
  ["Colombia", "CO", "COL", "COP", "South America"], ["Peru", "PE", "PER", "PEN", "South America"],
  ["United Kingdom", "GB", "GBR", "GBP", "Europe"], ["Ireland", "IE", "IRL", "EUR", "Europe"],
  ["France", "FR", "FRA", "EUR", "Europe"], ["Germany", "DE", "DEU", "EUR", "Europe"], ["Spain", "ES", "ESP", "EUR", "Europe"],
  ["Portugal", "PT", "PRT", "EUR", "Europe"], ["Italy", "IT", "ITA", "EUR", "Europe"], ["Netherlands", "NL", "NLD", "EUR", "Europe"],
  ["Belgium", "BE", "BEL", "EUR", "Europe"], ["Switzerland", "CH", "CHE", "CHF", "Europe"], ["Austria", "AT", "AUT", "EUR", "Europe"],
  ["Sweden", "SE", "SWE", "SEK", "Europe"], ["Norway", "NO", "NOR", "NOK", "Europe"], ["Denmark", "DK", "DNK", "DKK", "Europe"],
  ["Finland", "FI", "FIN", "EUR", "Europe"], ["Poland", "PL", "POL", "PLN", "Europe"], ["Czechia", "CZ", "CZE", "CZK", "Europe"],
  ["Hungary", "HU", "HUN", "HUF", "Europe"], ["Greece", "GR", "GRC", "EUR", "Europe"], ["Turkey", "TR", "TUR", "TRY", "Europe"],
  ["Romania", "RO", "ROU", "RON", "Europe"], ["Ukraine", "UA", "UKR", "UAH", "Europe"], ["Egypt", "EG", "EGY", "EGP", "Africa"],
  ["Nigeria", "NG", "NGA", "NGN", "Africa"], ["Kenya", "KE", "KEN", "KES", "Africa"], ["South Africa", "ZA", "ZAF", "ZAR", "Africa"],
  ["Morocco", "MA", "MAR", "MAD", "Africa"], ["Ghana", "GH", "GHA", "GHS", "Africa"], ["Ethiopia", "ET", "ETH", "ETB", "Africa"],
  ["Israel", "IL", "ISR", "ILS", "Asia"], ["Saudi Arabia", "SA", "SAU", "SAR", "Asia"], ["United Arab Emirates", "AE", "ARE", "AED", "Asia"],
  ["India", "IN", "IND", "INR", "Asia"], ["Pakistan", "PK", "PAK", "PKR", "Asia"], ["China", "CN", "CHN", "CNY", "Asia"],
  ["Japan", "JP", "JPN", "JPY", "Asia"], ["South Korea", "KR", "KOR", "KRW", "Asia"], ["Singapore", "SG", "SGP", "SGD", "Asia"],
  ["Indonesia", "ID", "IDN", "IDR", "Asia"], ["Thailand", "TH", "THA", "THB", "Asia"], ["Vietnam", "VN", "VNM", "VND", "Asia"],
  ["Philippines", "PH", "PHL", "PHP", "Asia"], ["Malaysia", "MY", "MYS", "MYR", "Asia"], ["Australia", "AU", "AUS", "AUD", "Oceania"],
  ["New Zealand", "NZ", "NZL", "NZD", "Oceania"]
]

/** Currencies: ISO code, name, symbol. */
export const currencies: ReadonlyArray<readonly [string, string, string]> = [
  ["USD", "US Dollar", "$"], ["EUR", "Euro", "€"], ["GBP", "Pound Sterling", "£"], ["JPY", "Japanese Yen", "¥"],
  ["CHF", "Swiss Franc", "CHF"], ["CAD", "Canadian Dollar", "C$"], ["AUD", "Australian Dollar", "A$"],
  ["NZD", "New Zealand Dollar", "NZ$"], ["CNY", "Chinese Yuan", "¥"], ["INR", "Indian Rupee", "₹"], ["BRL", "Brazilian Real", "R$"],
  ["MXN", "Mexican Peso", "MX$"], ["ARS", "Argentine Peso", "AR$"], ["CLP", "Chilean Peso", "CLP$"], ["COP", "Colombian Peso", "COL$"],
  ["PEN", "Peruvian Sol", "S/"], ["SEK", "Swedish Krona", "kr"], ["NOK", "Norwegian Krone", "kr"], ["DKK", "Danish Krone", "kr"],
  ["PLN", "Polish Zloty", "zł"], ["CZK", "Czech Koruna", "Kč"], ["HUF", "Hungarian Forint", "Ft"], ["TRY", "Turkish Lira", "₺"],
  ["RON", "Romanian Leu", "lei"], ["UAH", "Ukrainian Hryvnia", "₴"], ["EGP", "Egyptian Pound", "E£"], ["NGN", "Nigerian Naira", "₦"],
  ["KES", "Kenyan Shilling", "KSh"], ["ZAR", "South African Rand", "R"], ["MAD", "Moroccan Dirham", "MAD"], ["GHS", "Ghanaian Cedi", "GH₵"],
  ["ETB", "Ethiopian Birr", "Br"], ["ILS", "Israeli New Shekel", "₪"], ["SAR", "Saudi Riyal", "SR"], ["AED", "UAE Dirham", "AED"],
  ["PKR", "Pakistani Rupee", "Rs"], ["KRW", "South Korean Won", "₩"], ["SGD", "Singapore Dollar", "S$"], ["IDR", "Indonesian Rupiah", "Rp"],
  ["THB", "Thai Baht", "฿"], ["VND", "Vietnamese Dong", "₫"], ["PHP", "Philippine Peso", "₱"], ["MYR", "Malaysian Ringgit", "RM"]
]

/** Syllables for coined brand names (`Zentria`, `Kovalo`). */
export const brandHeads: ReadonlyArray<string> = [
  "Ae", "Al", "Ar", "Au", "Bel", "Blu", "Bri", "Cal", "Cel", "Cor", "Da", "Del", "Ev", "Fa", "Fle", "Gal", "Hel", "Ix",
  "Jun", "Ka", "Kel", "Lu", "Ly", "Ma", "Mer", "No", "Nov", "Om", "Or", "Pa", "Pli", "Qua", "Ra", "Rel", "Sa", "Sol",
  "Ta", "Tri", "Ul", "Va", "Vel", "Wi", "Xe", "Yo", "Ze", "Zo", "Bra", "Cru", "Dro", "Fi", "Gro", "Hy", "Ke", "Lo",
  "Mi", "Ne", "Pe", "Ri", "Se", "Te", "Vi"
]

/** Endings for coined brand names. */
export const brandTails: ReadonlyArray<string> = [
  "tria", "valo", "nix", "ra", "via", "lo", "ma", "tex", "vo", "rix", "na", "dia", "mo", "zen", "lia", "tis", "ros",
  "dex", "vix", "ta", "nova", "lyn", "ora", "quin", "sor", "tic", "ly", "mbo", "rax", "zio", "von", "gen", "pod",
  "dra", "vant", "lex", "mir", "sta", "bit", "wave"
]

/** Nature and place words used in company and product names (`Bluepeak`, `Northwind`). */
export const compoundHeads: ReadonlyArray<string> = [
  "Blue", "North", "Silver", "Iron", "Red", "Green", "Bright", "Clear", "Swift", "True", "Open", "Deep", "High",
  "Star", "Sun", "Moon", "Cloud", "Stone", "River", "Cedar", "Summit", "Harbor", "Pine", "Fox", "Falcon", "Atlas",
  "Orbit", "Pixel", "Quantum", "Vector", "Nimbus", "Apex", "Beacon", "Crest", "Delta", "Echo", "Ember", "Flux",
  "Granite", "Horizon", "Keystone", "Lumen", "Meridian", "Nova", "Onyx", "Polar", "Sierra", "Terra", "Vertex", "Zenith"
]

/** Second halves of compound names. */
export const compoundTails: ReadonlyArray<string> = [
  "peak", "wind", "field", "stone", "bridge", "light", "line", "path", "point", "wave", "works", "forge", "gate",
  "leaf", "rock", "side", "star", "view", "well", "wood", "bay", "brook", "crest", "dale", "hill", "mark", "spark"
]

/** Industries, for companies and their descriptions. */
export const industries: ReadonlyArray<string> = [
  "Software", "Semiconductors", "Banking", "Insurance", "Retail", "Pharmaceuticals", "Biotechnology", "Energy",
  "Utilities", "Telecommunications", "Media", "Automotive", "Aerospace", "Logistics", "Real Estate", "Hospitality",
  "Food & Beverage", "Consumer Electronics", "Healthcare", "Education", "Mining", "Chemicals", "Agriculture",
  "Construction", "Transportation", "Gaming", "E-commerce", "Cybersecurity", "Fintech", "Apparel"
]

/** Company name endings by register. */
export const companySuffixes: ReadonlyArray<string> = [
  "Inc.", "Ltd.", "Group", "Holdings", "Corp.", "Labs", "Systems", "Technologies", "Partners", "Industries",
  "Dynamics", "Solutions", "Networks", "Analytics", "Capital", "Ventures", "Co.", "AG", "S.A.", "GmbH"
]

/** Team nicknames. */
export const mascots: ReadonlyArray<string> = [
  "Falcons", "Rovers", "United", "Athletic", "Rangers", "Wanderers", "Lions", "Tigers", "Bears", "Wolves", "Eagles",
  "Hawks", "Sharks", "Dragons", "Knights", "Titans", "Storm", "Thunder", "Comets", "Pirates", "Mariners", "Miners",
  "Hornets", "Stallions", "Bulls", "Panthers", "Ravens", "Vikings", "Spartans", "Giants", "Royals", "City", "FC",
  "Rebels", "Cyclones", "Foxes", "Owls", "Badgers", "Orcas", "Phoenix"
]

/** Sports with their positions. */
export const sports: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["football", ["Goalkeeper", "Defender", "Midfielder", "Forward"]],
  ["basketball", ["Point Guard", "Shooting Guard", "Small Forward", "Power Forward", "Center"]],
  ["baseball", ["Pitcher", "Catcher", "Infielder", "Outfielder"]],
  ["ice hockey", ["Goaltender", "Defenseman", "Center", "Winger"]],
  ["rugby", ["Prop", "Hooker", "Lock", "Flanker", "Scrum-half", "Fly-half", "Wing", "Fullback"]],
  ["cricket", ["Batsman", "Bowler", "All-rounder", "Wicket-keeper"]],
  ["volleyball", ["Setter", "Outside Hitter", "Middle Blocker", "Libero", "Opposite"]],
  ["handball", ["Goalkeeper", "Wing", "Back", "Pivot"]]
]

/** League name patterns: region word + competition word. */
export const leagueWords: ReadonlyArray<string> = [
  "Premier League", "Championship", "Super League", "First Division", "National League", "Pro League", "Conference",
  "Cup Series", "Elite Series", "Continental League", "Liga", "Association"
]

/** Adjectives for titles (movies, songs, games, campaigns). */
export const titleAdjectives: ReadonlyArray<string> = [
  "Silent", "Broken", "Golden", "Hidden", "Last", "Lost", "Midnight", "Northern", "Crimson", "Electric", "Endless",
  "Fading", "Frozen", "Gentle", "Hollow", "Infinite", "Quiet", "Restless", "Secret", "Shattered", "Silver", "Wild",
  "Wandering", "Burning", "Distant", "Falling", "Final", "Glass", "Paper", "Velvet", "Neon", "Savage", "Brave", "Lucky"
]

/** Nouns for titles. */
export const titleNouns: ReadonlyArray<string> = [
  "Harbor", "Kingdom", "Summer", "Winter", "River", "Horizon", "Empire", "Garden", "Mirror", "Signal", "Shadow",
  "Voyage", "Promise", "Frontier", "Orchard", "Lighthouse", "Echo", "Storm", "Heart", "Road", "City", "Ocean", "Night",
  "Fire", "Dream", "Letter", "Island", "Machine", "Season", "Song", "Crown", "Border", "Station", "Valley", "Protocol"
]

/** Movie and music genres. */
export const movieGenres: ReadonlyArray<string> = ["Drama", "Comedy", "Thriller", "Action", "Science Fiction", "Horror", "Romance", "Documentary", "Animation", "Crime", "Fantasy", "Adventure", "Mystery", "Biography"]
/** Music genres. */
export const musicGenres: ReadonlyArray<string> = ["Pop", "Rock", "Hip-Hop", "Jazz", "Electronic", "Classical", "R&B", "Country", "Indie", "Metal", "Folk", "Reggae", "Latin", "Soul", "Blues", "K-Pop"]
/** Cuisines. */
export const cuisines: ReadonlyArray<string> = ["Italian", "Japanese", "Mexican", "Indian", "Thai", "French", "Chinese", "Greek", "Lebanese", "Spanish", "Korean", "Vietnamese", "Ethiopian", "Peruvian", "Turkish", "American", "Moroccan", "Brazilian"]
/** Main ingredients of dishes. */
export const ingredients: ReadonlyArray<string> = ["Chickpea", "Salmon", "Chicken", "Mushroom", "Lentil", "Beef", "Tofu", "Shrimp", "Pumpkin", "Spinach", "Lamb", "Eggplant", "Cod", "Pork", "Quinoa", "Sweet Potato", "Halloumi", "Duck", "Black Bean", "Cauliflower"]
/** Dish kinds. */
export const dishes: ReadonlyArray<string> = ["Stew", "Curry", "Salad", "Tacos", "Risotto", "Soup", "Skewers", "Bowl", "Pie", "Stir-Fry", "Burger", "Pasta", "Flatbread", "Casserole", "Wraps", "Tagine", "Gratin", "Noodles"]
/** Flavour adjectives for dishes. */
export const dishAdjectives: ReadonlyArray<string> = ["Smoky", "Spicy", "Creamy", "Roasted", "Zesty", "Herbed", "Crispy", "Garlicky", "Honey-Glazed", "Lemony", "Slow-Cooked", "Charred", "Rustic", "Grilled"]
/** Product nouns for e-commerce. */
export const productNouns: ReadonlyArray<string> = [
  "Wireless Earbuds", "Smartwatch", "Laptop", "Tablet", "Bluetooth Speaker", "Running Shoes", "Backpack", "Coffee Maker",
  "Air Fryer", "Desk Lamp", "Office Chair", "Mechanical Keyboard", "Gaming Mouse", "Monitor", "Water Bottle", "Yoga Mat",
  "Electric Toothbrush", "Blender", "Vacuum Cleaner", "Rain Jacket", "Sunglasses", "Phone Case", "Power Bank",
  "Action Camera", "Drone", "Headphones", "Fitness Tracker", "Espresso Machine", "Robot Vacuum", "Smart Bulb"
]
/** Product categories. */
export const productCategories: ReadonlyArray<string> = ["Electronics", "Home & Kitchen", "Sports & Outdoors", "Fashion", "Beauty", "Toys", "Books", "Automotive", "Garden", "Health", "Office", "Pet Supplies"]
/** Academic subjects. */
export const subjects: ReadonlyArray<string> = ["Computer Science", "Data Science", "Economics", "Psychology", "Biology", "Chemistry", "Physics", "Mathematics", "History", "Philosophy", "Marketing", "Finance", "Statistics", "Machine Learning", "Graphic Design", "Creative Writing", "Public Health", "Architecture", "Linguistics", "Music Theory"]
/** Job titles. */
export const jobTitles: ReadonlyArray<string> = ["Software Engineer", "Data Analyst", "Product Manager", "UX Designer", "Accountant", "Sales Representative", "Marketing Manager", "Nurse", "Mechanical Engineer", "Customer Success Manager", "DevOps Engineer", "Financial Analyst", "HR Generalist", "Operations Manager", "Teacher", "Research Scientist", "Content Writer", "Project Coordinator", "Security Analyst", "Logistics Planner"]
/** Seniority levels. */
export const seniorities: ReadonlyArray<string> = ["Junior", "Associate", "Senior", "Lead", "Principal", "Staff"]
/** Street name endings. */
export const streetSuffixes: ReadonlyArray<string> = ["Street", "Avenue", "Road", "Lane", "Boulevard", "Drive", "Way", "Place", "Terrace", "Court"]
/** Medical conditions (common names). */
export const conditions: ReadonlyArray<string> = ["Hypertension", "Type 2 Diabetes", "Asthma", "Migraine", "Osteoarthritis", "Seasonal Allergies", "Anemia", "Hypothyroidism", "Gastritis", "Bronchitis", "Eczema", "Insomnia", "Sinusitis", "Tendinitis", "Psoriasis", "Gout", "Influenza", "Conjunctivitis", "Anxiety Disorder", "Vitamin D Deficiency", "Celiac Disease", "Lyme Disease", "Kidney Stones", "Sciatica"]
/** Medical specialties. */
export const specialties: ReadonlyArray<string> = ["Cardiology", "Dermatology", "Endocrinology", "Family Medicine", "Gastroenterology", "Neurology", "Oncology", "Orthopedics", "Pediatrics", "Psychiatry", "Pulmonology", "Rheumatology"]
/** Drug classes. */
export const drugClasses: ReadonlyArray<string> = ["Analgesic", "Antibiotic", "Antihistamine", "Antihypertensive", "Anticoagulant", "Antidepressant", "Antidiabetic", "Antiviral", "Bronchodilator", "Corticosteroid", "Statin", "Proton Pump Inhibitor"]
/** Exercises (common names). */
export const exercises: ReadonlyArray<string> = ["Push-Up", "Squat", "Deadlift", "Bench Press", "Plank", "Lunge", "Pull-Up", "Burpee", "Kettlebell Swing", "Mountain Climber", "Jumping Jack", "Bicep Curl", "Tricep Dip", "Russian Twist", "Leg Press", "Lat Pulldown", "Shoulder Press", "Calf Raise", "Box Jump", "Rowing Sprint", "Hip Thrust", "Glute Bridge", "Side Plank", "Farmer's Walk", "Step-Up", "Chest Fly", "Face Pull", "Hanging Leg Raise", "Battle Ropes", "Bear Crawl"]
/** Muscle groups. */
export const muscleGroups: ReadonlyArray<string> = ["chest", "back", "legs", "shoulders", "arms", "core", "glutes", "full body"]
/** Foods (common names) for nutrition lookups. */
export const foods: ReadonlyArray<string> = ["Apple", "Banana", "Orange", "Avocado", "Broccoli", "Carrot", "Spinach", "Brown Rice", "White Rice", "Oatmeal", "Whole Wheat Bread", "Greek Yogurt", "Cheddar Cheese", "Whole Milk", "Egg", "Chicken Breast", "Salmon Fillet", "Tuna", "Ground Beef", "Tofu", "Lentils", "Chickpeas", "Almonds", "Walnuts", "Peanut Butter", "Olive Oil", "Butter", "Potato", "Sweet Potato", "Quinoa", "Blueberries", "Strawberries", "Dark Chocolate", "Honey", "Pasta", "Mango", "Pineapple", "Kale", "Cottage Cheese", "Black Beans"]
/** Chemical name parts (for generated compounds). */
export const chemPrefixes: ReadonlyArray<string> = ["methyl", "ethyl", "propyl", "butyl", "chloro", "fluoro", "bromo", "hydroxy", "amino", "nitro", "dimethyl", "trifluoro"]
/** Parent compounds. */
export const chemParents: ReadonlyArray<string> = ["benzene", "toluene", "phenol", "pyridine", "butanoic acid", "hexanol", "propanone", "ethanamide", "cyclohexane", "naphthalene", "acetate", "furan", "indole", "pentane"]
/** Car makes (invented) for vehicles. */
export const carMakes: ReadonlyArray<string> = ["Aurelia", "Brandt", "Castor", "Drayton", "Elvaro", "Fenwick", "Garrow", "Halcyon", "Izar", "Kestrel", "Lorento", "Marlin", "Norrland", "Ostara", "Pallas", "Rivane"]
/** Car body styles. */
export const bodyStyles: ReadonlyArray<string> = ["Sedan", "SUV", "Hatchback", "Coupe", "Pickup", "Wagon", "Convertible", "Minivan", "Crossover"]
/** Fuel kinds. */
export const fuels: ReadonlyArray<string> = ["gasoline", "diesel", "hybrid", "electric", "plug-in hybrid"]
/** Device kinds. */
export const deviceKinds: ReadonlyArray<string> = ["thermostat", "smart plug", "security camera", "door lock", "air purifier", "smoke detector", "light strip", "water sensor", "smart speaker", "robot vacuum"]
/** Words for hashtags, topics and search queries. */
export const topics: ReadonlyArray<string> = ["travel", "fitness", "startup", "climate", "design", "gaming", "foodie", "music", "photography", "science", "crypto", "fashion", "books", "football", "ai", "coding", "wellness", "art", "movies", "nature", "diy", "pets", "space", "history", "marketing", "finance", "education", "health", "sustainability", "cooking"]
/** News topics. */
export const newsTopics: ReadonlyArray<string> = ["Business", "Technology", "Politics", "Sports", "Science", "Health", "Entertainment", "World", "Climate", "Markets"]
/** Newspaper title words. */
export const paperWords: ReadonlyArray<string> = ["Herald", "Times", "Gazette", "Courier", "Post", "Chronicle", "Tribune", "Observer", "Ledger", "Dispatch", "Sentinel", "Journal"]
/** Languages: name and ISO 639-1 code. */
export const languages: ReadonlyArray<readonly [string, string]> = [["English", "en"], ["Spanish", "es"], ["French", "fr"], ["German", "de"], ["Italian", "it"], ["Portuguese", "pt"], ["Dutch", "nl"], ["Swedish", "sv"], ["Polish", "pl"], ["Turkish", "tr"], ["Russian", "ru"], ["Arabic", "ar"], ["Hindi", "hi"], ["Chinese", "zh"], ["Japanese", "ja"], ["Korean", "ko"], ["Indonesian", "id"], ["Vietnamese", "vi"], ["Greek", "el"], ["Hebrew", "he"]]
/** Top-level domains. */
export const tlds: ReadonlyArray<string> = ["com", "io", "net", "org", "co", "app", "dev", "ai", "tech", "shop"]
/** Web page kinds, for search results. */
export const pageKinds: ReadonlyArray<string> = ["guide", "review", "news", "blog post", "documentation", "forum thread", "product page", "tutorial"]
/** Vulnerability kinds. */
export const vulnKinds: ReadonlyArray<string> = ["SQL injection", "cross-site scripting", "buffer overflow", "path traversal", "privilege escalation", "remote code execution", "denial of service", "authentication bypass", "information disclosure", "server-side request forgery"]
/** Game genres. */
export const gameGenres: ReadonlyArray<string> = ["RPG", "Shooter", "Strategy", "Puzzle", "Racing", "Sports", "Platformer", "Simulation", "MOBA", "Battle Royale", "Survival", "Fighting"]
/** Gaming platforms. */
export const platforms: ReadonlyArray<string> = ["PC", "PlayStation 5", "Xbox Series X", "Nintendo Switch", "iOS", "Android"]
/** Event kinds. */
export const eventKinds: ReadonlyArray<string> = ["Jazz Festival", "Tech Conference", "Food Fair", "Marathon", "Film Festival", "Book Fair", "Design Week", "Startup Summit", "Art Biennale", "Music Festival", "Comic Con", "Wine Expo"]
/** Venue kinds. */
export const venueKinds: ReadonlyArray<string> = ["Arena", "Hall", "Convention Center", "Amphitheater", "Stadium", "Theater", "Pavilion", "Expo Center"]
/** Point-of-interest kinds. */
export const poiKinds: ReadonlyArray<string> = ["museum", "park", "restaurant", "cafe", "library", "hospital", "pharmacy", "gas station", "supermarket", "gym", "bank", "hotel", "school", "cinema", "bakery"]
/** Shipping carriers (invented). */
export const carriers: ReadonlyArray<string> = ["SwiftShip", "Parcelon", "Northline Freight", "BlueArrow Express", "Cargonaut", "ParcelPoint", "Transvia", "Kite Logistics"]
/** Statuses of shipments. */
export const shipmentStatuses: ReadonlyArray<string> = ["label_created", "in_transit", "out_for_delivery", "delivered", "held_at_customs", "returned"]
/** Statuses of orders. */
export const orderStatuses: ReadonlyArray<string> = ["pending", "paid", "shipped", "delivered", "cancelled", "refunded"]
/** Payment statuses. */
export const paymentStatuses: ReadonlyArray<string> = ["succeeded", "pending", "failed", "refunded"]
/** Ticket statuses and priorities. */
export const ticketStatuses: ReadonlyArray<string> = ["open", "in_progress", "waiting", "resolved", "closed"]
/** Priorities. */
export const priorities: ReadonlyArray<string> = ["low", "normal", "high", "urgent"]
/** ML tasks. */
export const mlTasks: ReadonlyArray<string> = ["text-classification", "translation", "summarization", "image-classification", "object-detection", "speech-recognition", "text-generation", "question-answering", "sentence-embedding", "named-entity-recognition"]
/** Licences. */
export const licenses: ReadonlyArray<string> = ["MIT", "Apache-2.0", "CC-BY-4.0", "GPL-3.0", "BSD-3-Clause", "CC0-1.0", "proprietary"]
/** Energy sources. */
export const energySources: ReadonlyArray<string> = ["solar", "wind", "hydro", "natural gas", "nuclear", "geothermal", "biomass", "coal"]
/** Connector standards for EV charging. */
export const connectors: ReadonlyArray<string> = ["CCS", "CHAdeMO", "Type 2", "NACS", "J1772"]
/** File extensions with MIME types. */
export const fileTypes: ReadonlyArray<readonly [string, string]> = [["pdf", "application/pdf"], ["docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"], ["xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"], ["png", "image/png"], ["jpg", "image/jpeg"], ["csv", "text/csv"], ["json", "application/json"], ["mp4", "video/mp4"], ["zip", "application/zip"], ["txt", "text/plain"]]
/** Words for file names and project names. */
export const fileWords: ReadonlyArray<string> = ["report", "invoice", "roadmap", "budget", "summary", "contract", "slides", "notes", "backup", "export", "design", "proposal", "schedule", "inventory", "minutes"]
/** Exchanges for stocks. */
export const stockExchanges: ReadonlyArray<string> = ["NYSE", "NASDAQ", "LSE", "TSE", "Euronext", "HKEX", "TSX", "ASX", "SIX", "BSE"]
/** Sectors. */
export const sectors: ReadonlyArray<string> = ["Technology", "Financials", "Health Care", "Consumer Discretionary", "Consumer Staples", "Energy", "Industrials", "Materials", "Utilities", "Real Estate", "Communication Services"]
/** Hotel amenities. */
export const amenities: ReadonlyArray<string> = ["free wifi", "pool", "spa", "gym", "parking", "airport shuttle", "restaurant", "bar", "pet friendly", "breakfast included", "air conditioning", "ocean view"]
/** Property types. */
export const propertyTypes: ReadonlyArray<string> = ["apartment", "house", "condo", "townhouse", "studio", "villa", "loft"]
/** Transit modes. */
export const transitModes: ReadonlyArray<string> = ["metro", "tram", "bus", "commuter rail", "ferry", "light rail"]
/** Colours (line names, product variants). */
export const colours: ReadonlyArray<string> = ["Red", "Blue", "Green", "Yellow", "Orange", "Purple", "Silver", "Gold", "Black", "White", "Teal", "Pink"]
/** Text sentiment labels. */
export const sentiments: ReadonlyArray<string> = ["positive", "neutral", "negative"]
/** Object labels a vision model reports. */
export const visionLabels: ReadonlyArray<string> = ["person", "car", "dog", "cat", "bicycle", "tree", "building", "chair", "laptop", "bottle", "cup", "phone", "bird", "boat", "traffic light", "book", "backpack", "umbrella"]
/** Common English words, for generated sentences. */
export const commonWords: ReadonlyArray<string> = ["update", "launch", "record", "growth", "plan", "review", "market", "season", "team", "report", "city", "service", "customer", "data", "project", "release", "deal", "results", "trip", "event", "price", "weekend", "community", "feature", "story"]
