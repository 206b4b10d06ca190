/**
 * Sports: leagues own teams, teams own players; matches pair two teams of one league.
 */
import { hash32 } from "../../../math/Random.ts"
import * as D from "../Dsl.ts"
import type { EntityCore, EntityDef } from "../Model.ts"
import * as V from "../Values.ts"
import * as W from "../Words.ts"

const sportIndex = (leagueHash: number): number => hash32("sport", leagueHash) % W.sports.length
const sportOf = (e: EntityCore, leagueIndex: number): readonly [string, ReadonlyArray<string>] => {
  const sports = W.sports
  const i = sportIndex(e.world.entity("league", leagueIndex).hash)
  return sports[i] ?? ["football", ["Forward"]]
}

const leagueCountry = D.ref("country_code", "country code", "country", { inverse: "leagues", inverseLabel: "leagues" })

/** Leagues: a sport, a country, a competition name. */
export const league: EntityDef = {
  type: "league", noun: "league", plural: "leagues", synonyms: ["competition", "division", "championship"], nameLabel: "name",
  size: 180,
  id: D.numbered("LG-", 4, "league ID"),
  name: (e) => {
    const sport = (W.sports[sportIndex(e.hash)] ?? ["football"])[0]
    const region = e.h("r") % 3 === 0 ? e.world.name("country", leagueCountry.ref?.index(e) ?? 0) : V.pick(["Northern", "Southern", "Western", "Eastern", "Central", "Coastal", "Highland", "National", "Metropolitan", "Pacific", "Atlantic"], e.h("reg"))
    const word = V.pick(W.leagueWords, e.h("w"))
    return sport === "football" ? `${region} ${word}` : `${region} ${V.capitalize(sport)} ${word}`
  },
  attrs: [
    D.cat("sport", "sport", W.sports.map((s) => s[0]), { gen: (e) => (W.sports[sportIndex(e.hash)] ?? ["football"])[0] }),
    leagueCountry,
    D.refName("country", "country", leagueCountry),
    D.count("founded", "founding year", 1880, 2015),
    D.childCount("teams_count", "number of teams", "team"),
    D.str("season", "current season", () => "2023-24"),
    D.count("tier", "tier (1 = top flight)", 1, 3),
    D.str("current_champion", "reigning champion", (e) => {
      const c = e.world.children("team", e.index)
      return c.count === 0 ? "" : e.world.name("team", c.start + (e.h("champ") % c.count))
    })
  ]
}

const teamCity = D.ref("city_id", "home city ID", "city", { inverse: "teams", inverseLabel: "sports teams" })

/** Teams: named after their city. */
export const team: EntityDef = {
  type: "team", noun: "team", plural: "teams", synonyms: ["club", "squad", "franchise", "side"], nameLabel: "name",
  size: 0,
  parent: { type: "league", key: "league_id", label: "league", min: 10, max: 20, relation: "teams" },
  id: D.numbered("TM-", 5, "team ID"),
  name: (e) => `${e.world.name("city", teamCity.ref?.index(e) ?? 0)} ${V.pick(W.mascots, e.h("mascot"))}`,
  attrs: [
    D.parentId("league_id", "league ID", "league"),
    D.parentName("league", "league", "league"),
    D.cat("sport", "sport", W.sports.map((s) => s[0]), { gen: (e) => sportOf(e, e.parent)[0] }),
    teamCity,
    D.refName("city", "home city", teamCity),
    D.count("founded", "founding year", 1870, 2018),
    D.str("stadium", "home stadium", (e) => `${e.h("st") % 2 === 0 ? V.pick(W.lastNames, e.h("sn")) : V.compound(e.h("sc"))} ${V.pick(["Stadium", "Arena", "Park", "Field", "Ground", "Dome"], e.h("sk"))}`),
    D.logCount("capacity", "stadium capacity", 2000, 95000),
    D.str("coach", "head coach", (e) => V.personName(e.h("coach"))),
    D.count("wins", "wins this season", 0, 30),
    D.count("losses", "losses this season", 0, 30),
    D.count("draws", "draws this season", 0, 12),
    D.int("points", "league points", (e) => 3 * (e.get("wins") as number) + (e.get("draws") as number), { filter: "range" }),
    D.int("rank", "league position", (e) => {
      // The league's standings by points (ties broken by index), computed once per league.
      const standings = e.world.memo(`standings/${e.parent}`, () => {
        const c = e.world.children("team", e.parent)
        const teams = Array.from({ length: c.count }, (_, k) => c.start + k)
        const points = new Map(teams.map((k) => [k, e.world.attr("team", k, "points") as number] as const))
        teams.sort((a, b) => (points.get(b) ?? 0) - (points.get(a) ?? 0) || a - b)
        return new Map(teams.map((k, r) => [k, r + 1] as const))
      })
      return standings.get(e.index) ?? 0
    }, { filter: "range" }),
    D.childCount("squad_size", "squad size", "player"),
    D.str("website", "official website", (e) => `https://www.${V.domainFor(e.name, e.h("dom"))}`, { format: "uri", fact: false })
  ]
}

const playerNationality = D.ref("nationality_code", "nationality code", "country", { inverse: "players", inverseLabel: "players" })

/** Players: a team's squad. */
export const player: EntityDef = {
  type: "player", noun: "player", plural: "players", synonyms: ["athlete", "sportsperson", "roster member"], nameLabel: "name",
  size: 0,
  parent: { type: "team", key: "team_id", label: "team", min: 14, max: 24, relation: "players" },
  id: D.numbered("PL-", 6, "player ID"),
  name: (e, attempt) => V.personName(D.draw(e, attempt, "name"), attempt >= 4),
  uniqueNames: true,
  attrs: [
    D.parentId("team_id", "team ID", "team"),
    D.parentName("team", "team", "team"),
    D.str("position", "position", (e) => {
      const leagueIndex = e.world.entity("team", e.parent).parent
      return V.pick(sportOf(e, leagueIndex)[1], e.h("pos"))
    }),
    D.count("age", "age", 17, 38),
    D.date("birth_date", "date of birth", (e) => {
      const age = V.int(e.h("age"), 17, 38)
      return V.isoDate(V.today - age * 365 - V.int(e.h("bd"), 0, 364))
    }),
    playerNationality,
    D.refName("nationality", "nationality", playerNationality),
    D.int("jersey_number", "jersey number", (e) => 1 + ((e.position * 7 + (e.h("j") % 7)) % 99)),
    D.count("height_cm", "height in centimetres", 165, 212, { unit: "cm" }),
    D.count("appearances", "appearances this season", 0, 38),
    D.count("goals", "goals or points scored this season", 0, 40),
    D.count("assists", "assists this season", 0, 25),
    D.money("market_value", "market value", 50_000, 180_000_000, "USD"),
    D.date("contract_until", "contract end date", (e) => V.futureDate(e.h("contract"), 60, 1800))
  ]
}

const matchHome = D.ref("home_team_id", "home team ID", "team", { inverse: "matches", inverseLabel: "matches" })
const matchAway = D.ref("away_team_id", "away team ID", "team", {
  inverse: "matches", inverseLabel: "matches",
  index: (e) => {
    const home = matchHome.ref?.index(e) ?? 0
    const leagueIndex = e.world.entity("team", home).parent
    const c = e.world.children("team", leagueIndex)
    if (c.count < 2) return home
    const k = e.h("away") % (c.count - 1)
    const candidate = c.start + k
    return candidate >= home ? candidate + 1 : candidate
  }
})
const matchDay = (e: EntityCore): number => V.today + V.int(e.h("day"), -150, 90)

/** Matches: fixtures and results. */
export const match: EntityDef = {
  type: "match", noun: "match", plural: "matches", synonyms: ["game", "fixture", "event", "contest"], nameLabel: "name",
  size: 9000,
  id: D.numbered("MT-", 7, "match ID"),
  name: (e) => `${e.world.name("team", matchHome.ref?.index(e) ?? 0)} vs ${e.world.name("team", matchAway.ref?.index(e) ?? 0)}`,
  attrs: [
    matchHome,
    D.refName("home_team", "home team", matchHome),
    matchAway,
    D.refName("away_team", "away team", matchAway),
    D.str("league_id", "league ID", (e) => e.world.id("league", e.world.entity("team", matchHome.ref?.index(e) ?? 0).parent), {
      ref: { type: "league", index: (e) => e.world.entity("team", matchHome.ref?.index(e) ?? 0).parent, inverse: "matches", inverseLabel: "matches" },
      filter: "eq"
    }),
    D.date("date", "match date", (e) => V.isoDate(matchDay(e))),
    D.str("kickoff", "kick-off time (UTC)", (e) => `${String(V.int(e.h("ko"), 12, 21)).padStart(2, "0")}:${V.pick(["00", "15", "30", "45"], e.h("kom"))}`),
    D.str("venue", "venue", (e) => e.world.attr("team", matchHome.ref?.index(e) ?? 0, "stadium") as string),
    D.str("status", "status", (e) => (matchDay(e) < V.today ? "finished" : matchDay(e) === V.today ? "live" : "scheduled")),
    D.int("home_score", "home score", (e) => (matchDay(e) <= V.today ? V.int(e.h("hs"), 0, 5) : 0), { filter: "range" }),
    D.int("away_score", "away score", (e) => (matchDay(e) <= V.today ? V.int(e.h("as"), 0, 4) : 0), { filter: "range" }),
    D.logCount("attendance", "attendance", 800, 90000),
    D.str("referee", "referee", (e) => V.personName(e.h("ref")))
  ]
}

/** All sports types. */
export const sportsTypes: ReadonlyArray<EntityDef> = [league, team, player, match]
