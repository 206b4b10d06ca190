"""Throughput of one ToolEnv replica under the agent loop's traffic: C concurrent clients each playing whole episodes.

An episode is what a competent policy sends: one turn that plans and searches for every gold call's tool, then the gold
calls layer by layer (independent calls of a layer in one turn, later layers by ``$ref``), then the answer; then
``POST /score`` and ``DELETE``. The model is not simulated (no generation time): this is the environment's ceiling.

    python3 integrations/verl/examples/toolenv_load.py --server http://127.0.0.1:8765 --concurrency 1 4 8 --seconds 20
"""

import argparse
import json
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from paraagent_verl.toolenv_client import ToolEnvClient, ToolEnvError  # noqa: E402


def turns_of(task):
    """The scripted turns of a task: plan + searches, the gold calls by dependency layer, the answer."""
    gold = task["gold"]
    nodes = [{"id": c["id"], "slot": c["tool"].replace("_", " "), "deps": c["deps"]} for c in gold]
    searches = [{"slot": c["id"], "query": c["tool"].replace("_", " ")} for c in gold]
    turns = ["<plan>\n" + json.dumps({"nodes": nodes}) + "\n</plan>\n<search>\n" + json.dumps(searches) + "\n</search>"]
    done = set()
    while len(done) < len(gold):
        layer = [c for c in gold if c["id"] not in done and all(d in done for d in c["deps"])]
        if not layer:
            break
        turns.append("<call>\n" + json.dumps([{"id": c["id"], "name": c["tool"], "arguments": c["arguments"]} for c in layer]) + "\n</call>")
        done.update(c["id"] for c in layer)
    turns.append("<answer>\n" + "; ".join(f["value"] for f in task["facts"]) + "\n</answer>")
    return turns


def worker(client, tasks, start, stop_at, stats, lock):
    i = start
    while time.monotonic() < stop_at:
        task = tasks[i % len(tasks)]
        i += 1
        try:
            sid = client.create({"taskId": task["id"], "seed": i, "maxRounds": 12, "faultRate": 0.05})["sessionId"]
            latencies = []
            for k, text in enumerate(turns_of(task)):
                t = time.monotonic()
                done = client.step(sid, text, k).get("done")
                latencies.append(time.monotonic() - t)
                if done:
                    break
            t = time.monotonic()
            r_ans = client.score(sid)["answer"]["rAns"]
            score_s = time.monotonic() - t
            client.close(sid)
        except ToolEnvError as e:
            with lock:
                stats["errors"].append(str(e))
            continue
        with lock:
            stats["episodes"] += 1
            stats["steps"] += len(latencies)
            stats["step_latency"] += latencies
            stats["score_latency"].append(score_s)
            stats["r_ans"].append(r_ans)


def measure(url, token, tasks, concurrency, seconds):
    stats = {"episodes": 0, "steps": 0, "step_latency": [], "score_latency": [], "r_ans": [], "errors": []}
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds
    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(ToolEnvClient(url, token, 60), tasks, k * 7, stop_at, stats, lock)) for k in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - started
    lat = sorted(stats["step_latency"]) or [0.0]
    return {
        "concurrency": concurrency,
        "wall_s": round(wall, 1),
        "episodes": stats["episodes"],
        "steps": stats["steps"],
        "steps_per_s": round(stats["steps"] / wall, 1),
        "episodes_per_s": round(stats["episodes"] / wall, 2),
        "step_ms_p50": round(1000 * lat[len(lat) // 2], 1),
        "step_ms_p95": round(1000 * lat[int(len(lat) * 0.95)], 1),
        "score_ms_mean": round(1000 * statistics.mean(stats["score_latency"]), 1) if stats["score_latency"] else None,
        "mean_r_ans": round(statistics.mean(stats["r_ans"]), 3) if stats["r_ans"] else None,
        "errors": len(stats["errors"]),
        "first_error": stats["errors"][0] if stats["errors"] else None,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default=os.environ.get("PARAAGENT_SERVER", "http://127.0.0.1:8765"))
    parser.add_argument("--token", default=os.environ.get("PARAAGENT_SERVER_TOKEN"))
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--tasks", type=int, default=50, help="training tasks drawn (split train, all levels)")
    args = parser.parse_args()
    client = ToolEnvClient(args.server, args.token, 60)
    health = client.health()
    tasks = client.request("GET", f"/tasks?split=train&count={args.tasks}&gold=true")["tasks"]
    print(json.dumps({"server": args.server, "world": health["world"], "tasks": len(tasks), "cpus": os.cpu_count(),
                      "load_average": [round(x, 1) for x in os.getloadavg()]}))
    for c in args.concurrency:
        print(json.dumps(measure(args.server, args.token, tasks, c, args.seconds)), flush=True)


if __name__ == "__main__":
    main()
