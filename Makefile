# kafkamock — every target sets itself up on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
RUN_STAMP := $(VENV)/.run-stamp
JAVA_STAMP := .cache/java/.stamp
KAFKA_STAMP := .cache/kafka/.stamp
SPARK_STAMP := .cache/spark/.stamp
JS_STAMP   := .cache/node/.stamp
KGO_STAMP  := .cache/kgo/.stamp
KFAKE      := .cache/kfake/kfake

.PHONY: install java kafka spark js kgo kfake kgo-full kgo-chaos kgo-kafka kcat run test test-fast fuzz bench lint clean

install: $(STAMP)

$(STAMP): pyproject.toml setup.py kafkamock/records/_framing.c kafkamock/codec/_decode.c
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,bench,dev]'
	touch $@ $(RUN_STAMP)

# What `make run` needs: kafkamock and its spark extra (pyspark, pyarrow, numpy, pandas), with pip's progress.
$(RUN_STAMP): pyproject.toml
	@command -v java >/dev/null || (echo "make run needs a Java 17+ runtime for Spark (e.g. apt-get install openjdk-17-jre-headless)" >&2; exit 1)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "installing kafkamock and pyspark into $(VENV) (a few minutes the first time)"
	$(BIN)/pip install --progress-bar on --upgrade pip
	$(BIN)/pip install --progress-bar on -e '.[spark]' 'pyspark==4.2.0'
	touch $@

# Test-only Java side, resolved with Maven (Debian's maven, installed when missing) into .cache: Apache Kafka's own
# kafka-clients 4.3.1 (the codec's oracle and the Java client tests), and Apache Kafka 4.3.1's broker, the reference
# the differential suite runs beside kafkamock (see docs/architecture.md). The tests then run offline.
java: $(JAVA_STAMP)

$(JAVA_STAMP): $(STAMP) tests/java/fetch_jars.py tests/java/pom-clients.xml
	command -v mvn >/dev/null || (apt-get update -q && apt-get install -y -q maven)
	$(BIN)/python tests/java/fetch_jars.py clients .cache/java
	touch $@

# Spark's own Kafka connector (spark-sql-kafka-0-10, at the pinned pyspark's version) with what pyspark's jars lack,
# resolved with Maven into .cache/spark: format("kafka") for the tests and `make run`, offline afterwards.
spark: $(SPARK_STAMP)

$(SPARK_STAMP): $(RUN_STAMP) tests/java/fetch_jars.py tests/java/pom-spark.xml
	command -v mvn >/dev/null || (apt-get update -q && apt-get install -y -q maven)
	$(BIN)/python tests/java/fetch_jars.py spark .cache/spark
	touch $@

kafka: $(KAFKA_STAMP)

$(KAFKA_STAMP): $(STAMP) tests/java/fetch_jars.py tests/java/pom-kafka.xml tools/import_kafka_releases.py
	command -v mvn >/dev/null || (apt-get update -q && apt-get install -y -q maven)
	$(BIN)/python tests/java/fetch_jars.py kafka .cache/kafka
	$(BIN)/python tools/import_kafka_releases.py --fetch
	touch $@

# Test-only Node.js client for tests/interop/js: kafkajs 2.2.4 as tests/js/package-lock.json pins it, installed
# into .cache/node with `npm ci` (tests/support/js_clients.py); nodejs and npm are Debian packages, installed when
# missing.
js: $(JS_STAMP)

$(JS_STAMP): $(STAMP) tests/js/package.json tests/js/package-lock.json tests/js/.npmrc tests/support/js_clients.py
	(command -v node && command -v npm) >/dev/null || (apt-get update -q && apt-get install -y -q nodejs npm)
	PYTHONPATH=tests $(BIN)/python tests/support/js_clients.py .cache/node
	touch $@

# franz-go's client integration suite (pkg/kgo at the release tests/kgo/go.mod pins), built into .cache/kgo with the
# machine's Go (Debian's golang-go when there is none; the go command fetches the newer toolchain go.mod asks for).
# `make test` runs it against kafkamock at 1 and 3 brokers, under connection chaos and across kill -9 restarts, with
# a few thousand records (tests/interop/kgo/test_kgo.py); kgo-full runs the suite's own volume (500,000 records),
# kgo-chaos the chaos and restart passes with 50,000.
kgo: $(KGO_STAMP)

$(KGO_STAMP): $(STAMP) tests/kgo/go.mod tests/kgo/go.sum tests/support/kgo_suite.py
	command -v go >/dev/null || (apt-get update -q && apt-get install -y -q golang-go)
	PYTHONPATH=tests $(BIN)/python -m support.kgo_suite build
	touch $@

# franz-go's fake cluster (pkg/kfake at the pseudo-version bench/kfake/go.mod pins) as a one-broker process, a peer
# of kafkamock in the bench scripts (bench/peers.py): our own small main.go, built with the machine's Go (Debian's
# golang-go when there is none) into .cache/kfake.
kfake: $(KFAKE)

$(KFAKE): bench/kfake/go.mod bench/kfake/go.sum bench/kfake/main.go
	command -v go >/dev/null || (apt-get update -q && apt-get install -y -q golang-go)
	mkdir -p $(@D)
	cd bench/kfake && GOFLAGS=-mod=readonly go build -o $(abspath $@) .

kgo-full: install kgo
	KGO_RECORDS=500000 $(BIN)/python -m pytest tests/interop/kgo/test_kgo.py -k whole -x -p no:cacheprovider

# The same suite once against Apache Kafka 4.3.1 itself (make kafka), to tell a suite problem from a kafkamock one.
kgo-kafka: install kgo kafka
	PYTHONPATH=tests $(BIN)/python -m support.kgo_suite kafka $${KGO_RECORDS:-5000}

kgo-chaos: install kgo
	KGO_RECORDS=50000 $(BIN)/python -m pytest tests/interop/kgo/test_kgo_faults.py -x -p no:cacheprovider

# The main job: a broker on 127.0.0.1:$(PORT), the example Spark pipeline run against it through Spark's own Kafka
# connector (format("kafka")), then the broker stays up in the foreground (Ctrl-C stops it). It needs Python 3.11+
# and a Java 17+ runtime (Spark's); it installs kafkamock with its spark extra only, and Maven when missing.
PORT ?= 9092
run: $(RUN_STAMP) $(SPARK_STAMP)
	@$(BIN)/python tools/make_run.py --port $(PORT) --jars .cache/spark/jars/classpath.txt

# kcat for tests/interop/python/test_kcat.py and curl for the control-API tests: Debian packages, installed when
# missing.
kcat:
	(command -v kcat && command -v curl) || (apt-get update -q && apt-get install -y -q kcat curl)

# Two pytest-xdist workers, a test file each at a time: most of the suite's time is brokers and clients waiting.
TEST_WORKERS ?= 2
test: lint java kafka spark js kgo kcat
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

test-fast: install
	$(BIN)/python -m pytest -m "not slow and not java and not js and not kafka"

# The broker fuzzers (tests/fuzz: broken frames, then hostile values against `kafkamock serve`), each with fresh
# random cases for FUZZ_SECONDS (default 10 minutes); `make test` runs a short seeded pass of both.
FUZZ_SECONDS ?= 600
fuzz: install
	FUZZ_SECONDS=$(FUZZ_SECONDS) $(BIN)/python -m pytest tests/fuzz -x -q -s -p no:cacheprovider

bench: install kfake
	$(BIN)/python bench/codec.py
	$(BIN)/python bench/records.py

# ruff, and mypy at the strictness pyproject.toml sets (every function typed, no Any returned): part of `make test`.
lint: install
	$(BIN)/ruff check kafkamock tests bench tools examples
	$(BIN)/mypy kafkamock

clean:
	rm -rf $(VENV) .cache .pytest_cache .hypothesis build *.egg-info
