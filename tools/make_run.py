"""``make run``: a kafkamock broker on 127.0.0.1:PORT (9092 unless PORT= says), the example Spark pipeline run
against it through Spark's own Kafka connector, then the broker stays up until Ctrl-C. The broker's log goes to a
file (named when it is ready), so Spark's progress is all the terminal shows; Ctrl-C stops everything cleanly.

    .venv/bin/python tools/make_run.py --port 9092 --jars .cache/spark/jars/classpath.txt
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STOP_ON_ITS_OWN_S = 10      # after Ctrl-C, before the broker is sent SIGTERM


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=9092)
    parser.add_argument("--jars", type=Path, help="the classpath file `make spark` writes (Spark's connector)")
    parser.add_argument("--log", type=Path, default=ROOT / ".cache" / "run" / "broker.log")
    args = parser.parse_args()
    args.log.parent.mkdir(parents=True, exist_ok=True)
    bin_dir = Path(sys.executable).parent
    broker = subprocess.Popen([str(bin_dir / "kafkamock"), "serve", "--host", "127.0.0.1", "--port", str(args.port),
                               "--log-file", str(args.log)], stdout=subprocess.PIPE, text=True)
    try:
        ready = broker.stdout.readline() if broker.stdout else ""
        if not ready.startswith("kafkamock broker ready"):
            broker.wait()
            print(f"kafkamock did not start (see {args.log})" if broker.returncode else ready, file=sys.stderr)
            return broker.returncode or 1
        print(ready.strip(), flush=True)
        env = dict(os.environ)
        if args.jars is not None:
            env["KAFKAMOCK_SPARK_JARS"] = ":".join(
                line for line in args.jars.read_text().splitlines() if line and not line.startswith("#"))
        bootstrap = f"127.0.0.1:{args.port}"
        pipeline = subprocess.run([sys.executable, str(ROOT / "examples" / "orders_pipeline.py"),
                                   "--bootstrap-servers", bootstrap, "--wait", "30"], env=env)
        if pipeline.returncode != 0:
            return pipeline.returncode
        print(f"kafkamock is serving on {bootstrap} (Ctrl-C stops it; its log: {args.log})", flush=True)
        broker.wait()
        return 0
    except KeyboardInterrupt:
        # Ctrl-C reached the broker too (the terminal signals the whole foreground group): it stops on its own and
        # logs it. Told to stop again at once, a busy broker could see the SIGTERM first.
        try:
            broker.wait(timeout=STOP_ON_ITS_OWN_S)
        except subprocess.TimeoutExpired:
            pass
        return 0
    finally:
        if broker.poll() is None:
            broker.send_signal(signal.SIGTERM)
            broker.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
