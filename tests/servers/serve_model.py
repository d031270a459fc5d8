"""The model simulator on a fixed local port with a scripted model, for running `sleuth bench` against it:

    python -m tests.servers.serve_model faithful --port 8765 &
    SLEUTH_LLM_MODEL=openai:sim SLEUTH_LLM_BASE_URL=http://127.0.0.1:8765/v1 SLEUTH_LLM_API_KEY=sim \\
        python -m bot.cli bench --set acme --mode loop-graph --mode llm --embedder minilm

`faithful` paraphrases faithfully; `sloppy` changes numbers and negates claims; `over-establishing` establishes
every aspect on whatever it is shown (`model_brains`). `--profile laptop` serves at a laptop's speed with one slot. Test-only: it
serves on 127.0.0.1 until interrupted.
"""

from __future__ import annotations

import argparse
import threading

from tests.servers.model_brains import Faithful, OverEstablishing, Sloppy
from tests.servers.model_sim import ModelSimulator
from tests.servers.model_wire import CPU_ONLY, INSTANT, LAPTOP

PROFILES = {"instant": INSTANT, "laptop": LAPTOP, "cpu": CPU_ONLY}
BRAINS = {"faithful": Faithful, "sloppy": Sloppy, "over-establishing": OverEstablishing}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("brain", choices=sorted(BRAINS))
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--profile", choices=sorted(PROFILES), default="instant")
    args = parser.parse_args(argv)
    sim = ModelSimulator(BRAINS[args.brain](), port=args.port, profile=PROFILES[args.profile]).start()
    print(
        f"{args.brain} model at {sim.base_url('openai')} (OpenAI), {sim.root} (Ollama, Anthropic)", flush=True
    )
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        sim.close()


if __name__ == "__main__":
    main()
