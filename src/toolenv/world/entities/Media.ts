/**
 * Social networks and media: users, posts, comments, hashtags, news, movies and TV, music, video channels, books,
 * games and tournaments, email inboxes and stored files.
 */
import * as D from "../Dsl.ts"
import type { EntityDef } from "../Model.ts"
import * as V from "../Values.ts"
import * as W from "../Words.ts"

const userCity = D.ref("city_id", "home city ID", "city", { fact: false })

/** Social-network users. */
export const user: EntityDef = {
  type: "user", noun: "user", plural: "users", synonyms: ["account", "profile", "member", "creator", "customer"], nameLabel: "name",
  size: 8000,
  id: D.coded("", 10, "digits", "user ID", "1482736455"),
  name: (e, attempt) => V.personName(D.draw(e, attempt, "name"), attempt >= 4),
  uniqueNames: true,
  attrs: [
    D.str("username", "username", (e) => `${V.slug(e.name, "_")}${e.h("u") % 3 === 0 ? "" : V.int(e.h("ud"), 1, 999)}`),
    D.logCount("followers", "followers", 3, 9_000_000),
    D.logCount("following", "accounts followed", 1, 7500),
    D.childCount("posts_count", "number of posts", "post"),
    D.bool("verified", "verified", (e) => V.chance(e.h("ver"), 0.08), { filter: "eq" }),
    D.date("joined", "join date", (e) => V.pastDate(e.h("joined"), 30, 5400)),
    userCity,
    D.refName("location", "location", userCity),
    D.str("email", "email", (e) => V.email(e.name, V.mailDomain(e.h("md")), e.h("em")), { format: "email" }),
    D.str("bio", "bio", (e) => `${V.pick(W.jobTitles, e.h("job"))} · ${V.pick(W.topics, e.h("t1"))} & ${V.pick(W.topics, e.h("t2"))}`)
  ]
}

/** Posts, owned by their author. */
export const post: EntityDef = {
  type: "post", noun: "post", plural: "posts", synonyms: ["tweet", "status update", "update", "publication"], nameLabel: "text",
  size: 0,
  parent: { type: "user", key: "user_id", label: "author", min: 0, max: 8, relation: "posts" },
  id: D.coded("17", 17, "digits", "post ID", "1781234567890123456"),
  name: (e) => `${V.sentence(e.h("text"), V.capitalize(V.pick(W.topics, e.h("topic"))))} #${V.pick(W.topics, e.h("topic"))}`,
  attrs: [
    D.parentId("user_id", "author user ID", "user"),
    D.parentName("author", "author", "user"),
    D.str("text", "text", (e) => e.name),
    D.dateTime("created_at", "posting time", (e) => V.dateTimeOn(e.h("at"), V.today - V.int(e.h("ago"), 0, 400))),
    D.logCount("likes", "likes", 0, 250000),
    D.logCount("reposts", "reposts", 0, 40000),
    D.childCount("replies", "replies", "comment"),
    D.list("hashtags", "hashtags", (e) => [V.pick(W.topics, e.h("topic"))]),
    D.cat("language", "language", W.languages.map((l) => l[1]))
  ]
}

const commentAuthor = D.ref("author_id", "author user ID", "user")

/** Replies to posts. */
export const comment: EntityDef = {
  type: "comment", noun: "comment", plural: "comments", synonyms: ["reply", "response"], nameLabel: "text",
  size: 0,
  parent: { type: "post", key: "post_id", label: "post", min: 0, max: 4, relation: "comments" },
  id: D.coded("cmt_", 12, "alnum", "comment ID", "cmt_4k2m9x0q1b7z"),
  name: (e) => V.pick(["Totally agree!", "This is great news", "Not sure about this one", "Thanks for sharing", "Where can I find more?", "Congrats!", "Interesting take", "Could not disagree more", "Love it", "Following this"], e.h("text")),
  searchable: false,
  attrs: [
    D.parentId("post_id", "post ID", "post"),
    commentAuthor,
    D.refName("author", "author", commentAuthor),
    D.str("text", "text", (e) => e.name),
    D.dateTime("created_at", "time", (e) => V.dateTimeOn(e.h("at"), V.today - V.int(e.h("ago"), 0, 400))),
    D.logCount("likes", "likes", 0, 9000)
  ]
}

/** Hashtags and their trend statistics. */
export const hashtag: EntityDef = {
  type: "hashtag", noun: "hashtag", plural: "hashtags", synonyms: ["tag", "trend", "topic"], nameLabel: "tag",
  size: 500,
  id: { label: "hashtag (without #)", example: "travelgram", make: (e, attempt) => `${e.name.slice(1)}${attempt === 0 ? "" : attempt + 1}` },
  name: (e, attempt) => `#${V.pick(W.topics, e.hash)}${["", "life", "gram", "daily", "tips", "2024", "lovers", "community", "news", "goals", "vibes", "hacks", "ideas", "world", "love", "of", "time", "club"][(e.h("sfx") + attempt) % 18]}${attempt >= 18 ? attempt : ""}`,
  uniqueNames: true,
  attrs: [
    D.logCount("posts_count", "number of posts", 200, 60_000_000),
    D.int("trend_rank", "trending rank", (e) => e.index + 1, { filter: "range" }),
    D.measure("growth_24h_pct", "24-hour growth (%)", -30, 220, 1, { unit: "%" }),
    D.cat("category", "category", W.topics, { gen: (e) => V.pick(W.topics, e.hash) })
  ],
  series: [D.around("mentions", "daily mentions", (e) => V.logUniform(e.h("m"), 50, 400_000), 0.55, 0)]
}

const publisherCountry = D.ref("country_code", "country code", "country")

/** News publishers. */
export const publisher: EntityDef = {
  type: "publisher", noun: "news outlet", plural: "news outlets", synonyms: ["publisher", "newspaper", "news source", "media outlet"], nameLabel: "name",
  size: 400,
  id: { label: "source id", example: "the-ashford-herald", make: (e, attempt) => attempt === 0 ? V.slug(e.name) : `${V.slug(e.name)}-${attempt}` },
  name: (e) => `The ${V.placeName(e.h("p"))} ${V.pick(W.paperWords, e.h("w"))}`,
  attrs: [
    publisherCountry,
    D.refName("country", "country", publisherCountry),
    D.count("founded", "founding year", 1790, 2020),
    D.cat("language", "language", W.languages.map((l) => l[1])),
    D.logCount("monthly_readers", "monthly readers", 5000, 90_000_000),
    D.str("website", "website", (e) => `https://www.${V.domainFor(e.name, e.h("dom"))}`, { format: "uri", fact: false })
  ]
}

const articlePublisher = D.ref("source_id", "source id", "publisher", { inverse: "articles", inverseLabel: "articles" })
const articleCompany = D.ref("company_id", "company mentioned (ID)", "company", { inverse: "news", inverseLabel: "news articles", fact: false })

/** News articles. */
export const article: EntityDef = {
  type: "article", noun: "news article", plural: "news articles", synonyms: ["article", "story", "headline", "news item", "report"], nameLabel: "headline",
  size: 6000,
  id: D.coded("art_", 12, "hex", "article ID", "art_9f2c4e1a0b3d"),
  name: (e) => V.sentence(e.h("headline"), e.world.name("company", articleCompany.ref?.index(e) ?? 0)),
  attrs: [
    articlePublisher,
    D.refName("source", "news source", articlePublisher),
    articleCompany,
    D.str("author", "author", (e) => V.personName(e.h("author"))),
    D.dateTime("published_at", "publication time", (e) => V.dateTimeOn(e.h("at"), V.today - V.int(e.h("ago"), 0, 45))),
    D.cat("topic", "topic", W.newsTopics),
    D.str("url", "URL", (e) => `https://www.${V.domainFor(e.world.name("publisher", articlePublisher.ref?.index(e) ?? 0), 0)}/${V.slug(e.name)}`, { format: "uri", fact: false }),
    D.count("word_count", "word count", 180, 3200),
    D.cat("sentiment", "sentiment", W.sentiments)
  ]
}

/** Actors. */
export const actor: EntityDef = {
  type: "actor", noun: "actor", plural: "actors", synonyms: ["actress", "performer", "cast member", "star"], nameLabel: "name",
  size: 4000,
  id: D.coded("nm", 7, "digits", "person ID", "nm0000138"),
  name: (e, attempt) => V.personName(D.draw(e, attempt, "name"), attempt >= 4),
  uniqueNames: true,
  attrs: [
    D.date("birth_date", "date of birth", (e) => V.pastDate(e.h("born"), 6500, 30000)),
    D.str("birthplace", "birthplace", (e) => e.world.name("city", e.h("bp") % e.world.size("city"))),
    D.count("active_since", "active since (year)", 1960, 2020),
    D.count("awards", "awards won", 0, 40),
    D.count("height_cm", "height in centimetres", 150, 198, { unit: "cm" }),
    D.str("known_for", "best-known film", (e) => e.world.name("movie", e.h("kf") % e.world.size("movie")))
  ]
}

/** Movies (IMDb-style ids). */
export const movie: EntityDef = {
  type: "movie", noun: "movie", plural: "movies", synonyms: ["film", "feature", "picture", "title"], nameLabel: "title",
  size: 5000,
  id: D.coded("tt0", 6, "digits", "title ID", "tt0111161"),
  name: (e, attempt) => V.title(D.draw(e, attempt, "title")),
  uniqueNames: true,
  attrs: [
    D.count("year", "release year", 1950, 2024),
    D.count("runtime_min", "runtime in minutes", 72, 195, { unit: "min" }),
    D.cat("genre", "genre", W.movieGenres),
    D.measure("rating", "rating (out of 10)", 3.1, 9.3, 1),
    D.logCount("votes", "number of votes", 40, 2_800_000),
    D.str("director", "director", (e) => V.personName(e.h("director"))),
    D.cat("language", "original language", W.languages.map((l) => l[0])),
    D.money("box_office_usd", "box-office gross", 20_000, 2_500_000_000, "USD"),
    D.refs("cast", "main cast (person IDs)", "actor", 3, 6),
    D.cat("certificate", "age certificate", ["G", "PG", "PG-13", "R", "NC-17", "Unrated"])
  ]
}

/** TV shows. */
export const tvShow: EntityDef = {
  type: "tv_show", noun: "TV show", plural: "TV shows", synonyms: ["series", "TV series", "show", "programme"], nameLabel: "title",
  size: 1500,
  id: D.coded("tt1", 6, "digits", "title ID", "tt1475582"),
  name: (e, attempt) => V.title(D.draw(e, attempt, "title")),
  uniqueNames: true,
  attrs: [
    D.count("seasons", "number of seasons", 1, 14),
    D.count("episodes", "number of episodes", 6, 260),
    D.str("network", "network", (e) => `${V.coined(e.h("net"))} ${V.pick(["TV", "Channel", "Plus", "Studios", "Network"], e.h("nk"))}`),
    D.cat("genre", "genre", W.movieGenres),
    D.measure("rating", "rating (out of 10)", 4, 9.5, 1),
    D.date("first_aired", "first air date", (e) => V.pastDate(e.h("fa"), 100, 12000)),
    D.cat("status", "status", ["running", "ended", "renewed", "cancelled"]),
    D.str("creator", "creator", (e) => V.personName(e.h("creator")))
  ]
}

const artistCountry = D.ref("country_code", "country code", "country", { fact: false })

/** Music artists (Spotify-style base-62 ids). */
export const artist: EntityDef = {
  type: "artist", noun: "artist", plural: "artists", synonyms: ["musician", "band", "singer", "performer", "act"], nameLabel: "name",
  size: 2500,
  id: D.coded("", 22, "base64", "artist ID", "0TnOYISbd1XYRBk9myaseg"),
  name: (e, attempt) => D.draw(e, attempt, "band") % 3 === 0 ? `The ${V.pick(W.titleAdjectives, D.draw(e, attempt, "a"))} ${V.pick(W.titleNouns, D.draw(e, attempt, "n"))}s` : V.personName(D.draw(e, attempt, "name")),
  uniqueNames: true,
  attrs: [
    D.cat("genre", "genre", W.musicGenres),
    artistCountry,
    D.refName("country", "country", artistCountry),
    D.logCount("monthly_listeners", "monthly listeners", 500, 90_000_000),
    D.logCount("followers", "followers", 100, 110_000_000),
    D.count("debut_year", "debut year", 1965, 2023),
    D.str("label", "record label", (e) => `${V.coined(e.h("label"))} Records`),
    D.childCount("albums_count", "number of albums", "album")
  ]
}

/** Albums of an artist. */
export const album: EntityDef = {
  type: "album", noun: "album", plural: "albums", synonyms: ["record", "LP", "release", "EP"], nameLabel: "title",
  size: 0,
  parent: { type: "artist", key: "artist_id", label: "artist", min: 1, max: 5, relation: "albums" },
  id: D.coded("", 22, "base64", "album ID", "4aawyAB9vmqN3uQ7FjRGTy"),
  name: (e) => V.title(e.h("title")),
  attrs: [
    D.parentId("artist_id", "artist ID", "artist"),
    D.parentName("artist", "artist", "artist"),
    D.date("release_date", "release date", (e) => V.pastDate(e.h("rel"), 10, 15000)),
    D.childCount("total_tracks", "number of tracks", "song"),
    D.parentAttr("label", "label", "string", "artist", "label"),
    D.count("popularity", "popularity (0-100)", 0, 100)
  ]
}

/** Songs of an album. */
export const song: EntityDef = {
  type: "song", noun: "song", plural: "songs", synonyms: ["track", "single", "tune", "recording"], nameLabel: "title",
  size: 0,
  parent: { type: "album", key: "album_id", label: "album", min: 5, max: 12, relation: "tracks" },
  id: D.coded("", 22, "base64", "track ID", "11dFghVXANMlKmJXsNCbNl"),
  name: (e) => V.title(e.h("title")),
  attrs: [
    D.parentId("album_id", "album ID", "album"),
    D.parentName("album", "album", "album"),
    D.parentAttr("artist", "artist", "string", "album", "artist"),
    D.int("track_number", "track number", (e) => e.position + 1),
    D.count("duration_sec", "duration in seconds", 95, 420, { unit: "s" }),
    D.count("bpm", "tempo (BPM)", 62, 178),
    D.cat("key", "musical key", ["C major", "G major", "D major", "A minor", "E minor", "F major", "B flat major", "D minor", "E flat major", "C sharp minor"]),
    D.bool("explicit", "explicit lyrics", (e) => V.chance(e.h("exp"), 0.2)),
    D.logCount("plays", "play count", 100, 2_500_000_000)
  ]
}

/** Video channels. */
export const channel: EntityDef = {
  type: "channel", noun: "channel", plural: "channels", synonyms: ["creator channel", "video channel", "YouTuber"], nameLabel: "name",
  size: 2500,
  id: D.coded("UC", 22, "base64", "channel ID", "UCX6OQ3DkcsbYNE6H8uQQuVA"),
  name: (e, attempt) => D.draw(e, attempt, "style") % 2 === 0 ? `${V.pick(W.firstNames, D.draw(e, attempt, "n"))} ${V.pick(["Cooks", "Plays", "Explains", "Builds", "Travels", "Reviews", "TV", "Vlogs"], D.draw(e, attempt, "k"))}` : `${V.compound(D.draw(e, attempt, "c"))} ${V.pick(["Studio", "Media", "Academy", "Labs", "Channel"], D.draw(e, attempt, "k"))}`,
  uniqueNames: true,
  attrs: [
    D.logCount("subscribers", "subscribers", 50, 120_000_000),
    D.childCount("video_count", "number of videos", "video"),
    D.logCount("total_views", "total views", 1000, 30_000_000_000),
    D.cat("category", "category", ["Gaming", "Education", "Music", "Comedy", "Tech", "Cooking", "Travel", "Sports", "News", "Science"]),
    D.date("created", "creation date", (e) => V.pastDate(e.h("created"), 60, 6500)),
    D.str("handle", "handle", (e) => `@${V.slug(e.name, "")}`)
  ]
}

/** Videos of a channel. */
export const video: EntityDef = {
  type: "video", noun: "video", plural: "videos", synonyms: ["clip", "upload", "vlog", "short"], nameLabel: "title",
  size: 0,
  parent: { type: "channel", key: "channel_id", label: "channel", min: 1, max: 12, relation: "videos" },
  id: D.coded("", 11, "base64", "video ID", "dQw4w9WgXcQ"),
  name: (e) => {
    const t = V.pick(W.topics, e.h("topic"))
    switch (e.h("style") % 5) {
      case 0: return `How to get started with ${t} in ${V.int(e.h("n"), 5, 30)} minutes`
      case 1: return `Top ${V.int(e.h("n"), 5, 20)} ${t} tips nobody tells you`
      case 2: return `I tried ${t} for ${V.int(e.h("n"), 7, 100)} days`
      case 3: return `${V.capitalize(t)} explained: ${V.title(e.h("title"))}`
      default: return `${V.title(e.h("title"))} | ${V.capitalize(t)} vlog`
    }
  },
  attrs: [
    D.parentId("channel_id", "channel ID", "channel"),
    D.parentName("channel", "channel", "channel"),
    D.logCount("views", "views", 10, 900_000_000),
    D.logCount("likes", "likes", 0, 20_000_000),
    D.logCount("comment_count", "comments", 0, 300_000),
    D.count("duration_sec", "duration in seconds", 15, 7200, { unit: "s" }),
    D.dateTime("published_at", "publication time", (e) => V.dateTimeOn(e.h("at"), V.today - V.int(e.h("ago"), 0, 1500))),
    D.cat("language", "language", W.languages.map((l) => l[1]))
  ]
}

/** Books (ISBN-13 ids). */
export const book: EntityDef = {
  type: "book", noun: "book", plural: "books", synonyms: ["title", "novel", "publication", "edition"], nameLabel: "title",
  size: 5000,
  id: { label: "ISBN-13", example: "9780143127741", make: (e, attempt) => V.isbn13(e.h(`isbn${attempt}`)) },
  name: (e, attempt) => V.title(D.draw(e, attempt, "title")),
  uniqueNames: true,
  attrs: [
    D.str("author", "author", (e) => V.personName(e.h("author"))),
    D.str("publisher", "publisher", (e) => `${V.coined(e.h("pub"))} ${V.pick(["Press", "Books", "Publishing", "House"], e.h("pk"))}`),
    D.count("year", "publication year", 1900, 2024),
    D.count("pages", "page count", 64, 1100),
    D.cat("genre", "genre", ["Fiction", "Mystery", "Science Fiction", "Fantasy", "Biography", "History", "Self-Help", "Romance", "Poetry", "Business", "Science", "Travel"]),
    D.measure("rating", "average rating (out of 5)", 2.6, 4.9, 2),
    D.logCount("ratings_count", "number of ratings", 3, 4_000_000),
    D.cat("language", "language", W.languages.map((l) => l[0])),
    D.money("price", "list price", 4.99, 89, "USD")
  ]
}

/** Video games (Steam-style numeric ids). */
export const game: EntityDef = {
  type: "game", noun: "video game", plural: "video games", synonyms: ["game", "title", "gaming title"], nameLabel: "title",
  size: 3000,
  id: D.coded("", 6, "digits", "app ID", "1091500"),
  name: (e, attempt) => `${V.pick(W.titleAdjectives, D.draw(e, attempt, "a"))} ${V.pick(W.titleNouns, D.draw(e, attempt, "n"))}${D.draw(e, attempt, "sub") % 2 === 0 ? `: ${V.pick(["Rebirth", "Origins", "Legacy", "Frontiers", "Reckoning", "Ascension", "Remastered"], D.draw(e, attempt, "s"))}` : ` ${V.int(D.draw(e, attempt, "num"), 2, 5)}`}`,
  uniqueNames: true,
  attrs: [
    D.cat("genre", "genre", W.gameGenres),
    D.list("platforms", "platforms", (e) => W.platforms.filter((_, k) => k === e.h("p0") % W.platforms.length || V.chance(e.h(`p${k + 1}`), 0.4))),
    D.date("release_date", "release date", (e) => V.pastDate(e.h("rel"), 0, 9000)),
    D.str("developer", "developer", (e) => `${V.coined(e.h("dev"))} ${V.pick(["Games", "Studios", "Interactive", "Entertainment"], e.h("dk"))}`),
    D.count("metascore", "critic score (0-100)", 38, 97),
    D.money("price", "price", 0.99, 69.99, "USD"),
    D.logCount("players_online", "players online now", 0, 900_000),
    D.bool("multiplayer", "multiplayer", (e) => V.chance(e.h("mp"), 0.55))
  ]
}

const tournamentGame = D.ref("game_id", "game (app ID)", "game", { inverse: "tournaments", inverseLabel: "tournaments" })

/** Esports tournaments. */
export const tournament: EntityDef = {
  type: "tournament", noun: "tournament", plural: "tournaments", synonyms: ["esports event", "championship", "competition", "cup"], nameLabel: "name",
  size: 800,
  id: D.numbered("TRN-", 5, "tournament ID"),
  name: (e) => `${e.world.name("game", tournamentGame.ref?.index(e) ?? 0)} ${V.pick(["World Championship", "Masters", "Open", "Invitational", "Cup", "Major"], e.h("k"))} ${V.int(e.h("y"), 2023, 2025)}`,
  attrs: [
    tournamentGame,
    D.refName("game", "game", tournamentGame),
    D.money("prize_pool_usd", "prize pool", 5000, 40_000_000, "USD"),
    D.date("start_date", "start date", (e) => V.dateIn(e.h("start"), V.today - 200, V.today + 200)),
    D.str("host_city", "host city", (e) => e.world.name("city", e.h("hc") % e.world.size("city"))),
    D.count("teams", "number of teams", 8, 64),
    D.cat("format", "format", ["single elimination", "double elimination", "round robin", "swiss"])
  ]
}

/** Email messages in users' inboxes. */
export const emailMessage: EntityDef = {
  type: "email_message", noun: "email", plural: "emails", synonyms: ["message", "mail", "inbox item"], nameLabel: "subject",
  size: 0,
  parent: { type: "user", key: "mailbox_user_id", label: "mailbox owner", min: 0, max: 5, relation: "inbox" },
  id: D.coded("msg_", 16, "hex", "message ID", "msg_18c2f0a9b41d7e03"),
  name: (e) => `${V.pick(["Your order", "Invitation:", "Re: Project", "Weekly digest", "Invoice", "Reminder:", "Welcome to", "Security alert for"], e.h("s"))} ${V.pick(W.commonWords, e.h("w"))} ${V.int(e.h("n"), 2, 999)}`,
  attrs: [
    D.parentId("mailbox_user_id", "mailbox owner user ID", "user"),
    D.str("from", "sender", (e) => V.email(V.personName(e.h("from")), V.domainFor(V.companyName(e.h("fc")), e.h("fd")), e.h("fe")), { format: "email" }),
    D.parentAttr("to", "recipient", "string", "user", "email", { format: "email" }),
    D.dateTime("received_at", "time received", (e) => V.dateTimeOn(e.h("at"), V.today - V.int(e.h("ago"), 0, 60))),
    D.bool("read", "read", (e) => V.chance(e.h("read"), 0.6), { filter: "eq" }),
    D.bool("has_attachments", "has attachments", (e) => V.chance(e.h("att"), 0.3)),
    D.cat("folder", "folder", ["inbox", "archive", "spam", "promotions", "updates"])
  ]
}

const fileOwner = D.ref("owner_id", "owner user ID", "user", { inverse: "files", inverseLabel: "files" })

/** Stored files. */
export const file: EntityDef = {
  type: "file", noun: "file", plural: "files", synonyms: ["document", "upload", "attachment", "object"], nameLabel: "file name",
  size: 6000,
  id: D.coded("file_", 16, "alnum", "file ID", "file_8x2k4m9q0b1c7z3a"),
  name: (e) => {
    const t = V.pick(W.fileTypes, e.h("type"))[0]
    return `${V.pick(W.fileWords, e.h("w"))}_${V.int(e.h("y"), 2019, 2024)}_${V.pick(["q1", "q2", "q3", "q4", "final", "v2", "draft", "signed"], e.h("s"))}.${t}`
  },
  attrs: [
    fileOwner,
    D.logCount("size_bytes", "size in bytes", 200, 4_000_000_000),
    D.str("mime_type", "MIME type", (e) => V.pick(W.fileTypes, e.h("type"))[1]),
    D.dateTime("created_at", "creation time", (e) => V.dateTimeOn(e.h("c"), V.today - V.int(e.h("ca"), 10, 900))),
    D.dateTime("modified_at", "last modified", (e) => V.dateTimeOn(e.h("m"), V.today - V.int(e.h("ma"), 0, 9))),
    D.bool("shared", "shared", (e) => V.chance(e.h("shared"), 0.35), { filter: "eq" }),
    D.str("folder", "folder", (e) => `/${V.pick(["Documents", "Finance", "Projects", "Photos", "Backups", "Shared"], e.h("f"))}`)
  ]
}

/** All media and social types. */
export const mediaTypes: ReadonlyArray<EntityDef> = [user, post, comment, hashtag, publisher, article, actor, movie, tvShow, artist, album, song, channel, video, book, game, tournament, emailMessage, file]
