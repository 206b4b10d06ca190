/**
 * A small API-Bank data folder written to a temporary directory: three API descriptions in a level-1 prompt, four
 * level-1 dialogues (one clean, one whose value needs the greedy call pattern, one with no API call, one with a
 * malformed line and an unknown API) and one level-2 dialogue that finds its API through ToolSearcher.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const api = (name: string, description: string, input: Record<string, string>, output: Record<string, string>) =>
  JSON.stringify({
    name,
    description,
    input_parameters: Object.fromEntries(Object.entries(input).map(([k, d]) => [k, { type: "str", description: d }])),
    output_parameters: Object.fromEntries(Object.entries(output).map(([k, d]) => [k, { type: "str", description: d }]))
  })

const descriptions = [
  api("GetUserToken", "Get the user token.", { username: "The username of the user.", password: "The password of the user." }, { token: "The token of the user." }),
  api("AddAgenda", "The API for adding a schedule item includes parameters for token, content, time, and location.", {
    token: "User's token.",
    content: "The content of the agenda.",
    time: "The time for agenda. Format: %Y-%m-%d %H:%M:%S",
    location: "The location of the agenda."
  }, { status: "success or failed" }),
  api("Calculator", "This API provides basic arithmetic operations: addition, subtraction, multiplication, and division.", { formula: "The formula that needs to be calculated." }, { result: "The result of the formula." })
]

const call = (name: string, params: Record<string, unknown>, output: unknown) =>
  ({ role: "API", api_name: name, param_dict: params, result: { api_name: name, input: params, output, exception: null } })

const token = { username: "foo", password: "bar" }
const agenda = { token: "z9x8c7v6b5n4m3q2w1", content: "Meeting with the marketing team", time: "2021-09-28 14:00:00", location: "Conference room" }

/** The level-1 dialogues, by file name. */
export const level1: Readonly<Record<string, ReadonlyArray<unknown>>> = {
  "AddAgenda-level-1-1.jsonl": [
    { role: "User", text: "Please add the meeting with the marketing team tomorrow at 2pm in the conference room. Today is 2021-09-27" },
    { role: "AI", text: "I need your username and password first." },
    { role: "User", text: "My username is foo and my password is bar" },
    call("GetUserToken", token, { token: agenda.token }),
    { role: "AI", text: "Got your token, adding the agenda now." },
    call("AddAgenda", agenda, "success"),
    { role: "AI", text: "Done." }
  ],
  "Calculator-level-1-1.jsonl": [
    { role: "User", text: "What is (1+2)*3?" },
    call("Calculator", { formula: "(1+2)*3" }, { result: 9 }),
    { role: "AI", text: "It is 9." }
  ],
  "NoCall-level-1-1.jsonl": [
    { role: "User", text: "Hello" },
    { role: "AI", text: "Hi, how can I help?" }
  ],
  "Broken-level-1-1.jsonl": [
    { role: "User", text: "Log me in as foo with password bar, then fly me to the moon" },
    "{\"role\": \"API\", \"api_name\": ",
    call("GetUserToken", token, { token: agenda.token }),
    call("FlyToMoon", { token: agenda.token }, "success")
  ]
}

/** The level-2 dialogues, by file name. */
export const level2: Readonly<Record<string, ReadonlyArray<unknown>>> = {
  "AddAgenda-level-2-1.jsonl": [
    { role: "User", text: "Can you put the meeting with the marketing team on my agenda for 2021-09-28 14:00:00 in the conference room?" },
    call("ToolSearcher", { keywords: "add agenda" }, [JSON.parse(descriptions[0] as string), JSON.parse(descriptions[1] as string)]),
    { role: "AI", text: "I need your username and password first." },
    { role: "User", text: "username foo, password bar" },
    call("GetUserToken", token, { token: agenda.token }),
    call("AddAgenda", agenda, "success"),
    { role: "AI", text: "Done." }
  ]
}

const lines = (events: ReadonlyArray<unknown>): string => events.map((e) => (typeof e === "string" ? e : JSON.stringify(e))).join("\n") + "\n"

/** Writes the folder and returns its path (the caller removes it). */
export const writeFixture = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "api-bank-"))
  fs.mkdirSync(path.join(dir, "test-data"))
  const instruction = `Generate an API request in the format of [ApiName(key1='value1', key2='value2', ...)] based on the previous dialogue context.\nAPI descriptions:\n${descriptions.join("\n")}\n`
  fs.writeFileSync(path.join(dir, "test-data", "level-1-api.json"), JSON.stringify([{ instruction, input: "", output: "" }]))
  for (const [folder, files] of [["level-1-given-desc", level1], ["level-2-toolsearcher", level2]] as const) {
    const at = path.join(dir, "lv1-lv2-samples", folder)
    fs.mkdirSync(at, { recursive: true })
    for (const [name, events] of Object.entries(files)) fs.writeFileSync(path.join(at, name), lines(events))
  }
  return dir
}

/** The fixture's gold calls, for scripted models. */
export const gold = { token, agenda, formula: "(1+2)*3" } as const
