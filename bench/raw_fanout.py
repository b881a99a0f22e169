"""W2 raw ceiling: asyncio + httpx, items semaphore(C); per item one task call, then the three judges gathered.

Env (as the kit's drivers): BENCH_PORT, BENCH_N, BENCH_CONCURRENCY, BENCH_DATA, BENCH_OUTDIR; plus
BENCH_MAX_CONNECTIONS (the HTTP pool, as scoregate's model `max_connections`). Prints one `BENCH_RESULT {json}`.
"""

import asyncio
import json
import os
import sys
import time

sys.path.insert(0, os.environ["BENCH_KIT"])
import common as C  # the kit: template, data loader, result line
import httpx2 as httpx  # the transport scoregate uses (httpx 0.28 spends ~30 ms CPU per item here)

JUDGES = ("w2_a", "w2_b", "w2_c")
JUDGE_PROMPT = "Grade the summary for {key} from 1 to 5.\n\n<summary>\n{summary}\n</summary>"


def judge_body(key: str, summary: str) -> dict:
    """The same shape of request a scoregate judge sends: a rubric, the reply and a JSON schema for the answer."""
    schema = {
        "type": "object",
        "properties": {"reasoning": {"type": "string"}, key: {"type": "integer", "enum": [1, 2, 3, 4, 5]}},
        "required": ["reasoning", key],
        "additionalProperties": False,
    }
    return {
        "model": "mock",
        "messages": [
            {"role": "system", "content": "You are a strict, careful evaluator. Answer with JSON only."},
            {"role": "user", "content": JUDGE_PROMPT.format(key=key, summary=summary)},
        ],
        "temperature": 0,
        "max_tokens": 200,
        "response_format": {"type": "json_schema", "json_schema": {"name": key, "schema": schema, "strict": True}},
    }


async def main() -> None:
    items = C.load_data()
    os.makedirs(C.OUTDIR, exist_ok=True)
    pool = int(os.environ.get("BENCH_MAX_CONNECTIONS", str(C.CONCURRENCY)))
    limits = httpx.Limits(max_connections=pool, max_keepalive_connections=pool)
    client = httpx.AsyncClient(
        base_url=C.BASE_URL, limits=limits, timeout=60, headers={"Authorization": "Bearer sk-mock"}
    )
    sem = asyncio.Semaphore(C.CONCURRENCY)

    async def chat(body: dict) -> str:
        r = await client.post("/chat/completions", json=body)
        r.raise_for_status()
        return r.json()["choices"][0]["message"]["content"] or ""

    async def judge(key: str, summary: str) -> int | None:
        value = json.loads(await chat(judge_body(key, summary))).get(key)
        return value if isinstance(value, int) else None

    async def one(it: dict) -> dict:
        async with sem:
            reply = await chat({"model": "mock", "messages": [{"role": "user", "content": C.render(it["text"])}]})
            scores = await asyncio.gather(*(judge(key, reply) for key in JUDGES))
        return {"id": it["id"], "reply": reply, **dict(zip(JUDGES, scores, strict=True))}

    t0 = time.perf_counter()
    res = await asyncio.gather(*(one(it) for it in items), return_exceptions=True)
    ok = [r for r in res if isinstance(r, dict) and all(r[k] is not None for k in JUDGES)]
    with open(os.path.join(C.OUTDIR, "raw_fanout_results.jsonl"), "w") as f:
        for r in ok:
            f.write(json.dumps(r) + "\n")
    t1 = time.perf_counter()
    await client.aclose()
    C.emit(
        harness="raw_fanout",
        n_items=len(items),
        n_ok=len(ok),
        eval_s=t1 - t0,
        mean_scores={k: sum(r[k] for r in ok) / max(1, len(ok)) for k in JUDGES},
        errors=[repr(r) for r in res if not isinstance(r, dict)][:3],
    )


asyncio.run(main())
