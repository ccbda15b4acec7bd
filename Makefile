# kafkacodec: every target installs what it needs first (a .venv at the repository root).
PY      := .venv/bin/python
PIP     := .venv/bin/pip
KC      := .venv/bin/kafkacodec
# what is installed in .venv: the package with its runtime dependencies (make install), then the
# extras that some targets need on top (each once; pip rebuilds nothing that is up to date)
STAMP       := .venv/.installed
SPARK_STAMP := .venv/.installed-spark
TEST_STAMP  := .venv/.installed-test
BENCH_STAMP := .venv/.installed-bench
NODE_STAMP  := node_modules/.installed

.PHONY: install browser jdk generate check test test-cluster run bench docs wheels clean

# the package and its runtime dependencies, as `pip install kafkacodec` gives a user (no pyarrow,
# pyspark or test tools): the command is .venv/bin/kafkacodec
install: $(STAMP)

$(STAMP): pyproject.toml setup.py runtime/_kernels.pyx runtime/_fastread.pxd runtime/_fastwrite.pxd runtime/_exttypes.pxd runtime/_crc32.h runtime/_crc32_fold.h $(wildcard generated/_c_*.pyx)
	test -x $(PY) || python3 -m venv .venv
	$(PIP) install -q --upgrade pip "setuptools>=77" wheel
	$(PIP) install -q -e .
	touch $(STAMP)

# the extras, on top of the package: reinstalled when pyproject.toml changes, not when a .pyx does;
# their requirements alone (an extra's kafkacodec[...] expanded), so the package is not built again
# with pyspark: the JVM reader's jar too, compiled against its jars where javac is there (else the
# first read says why it takes the Python data source)
EXTRA = $(PY) -c 'import sys, re, tomllib; extras = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]; \
	needs = lambda name: [d for r in extras[name] for d in (needs(re.fullmatch(r"kafkacodec\[(\w+)\]", r)[1]) if r.startswith("kafkacodec[") else [r])]; \
	print("\n".join(dict.fromkeys(needs(sys.argv[1]))))'

$(SPARK_STAMP): pyproject.toml | $(STAMP)
	$(EXTRA) spark > .venv/requirements-spark.txt
	$(PIP) install -q -r .venv/requirements-spark.txt
	$(PY) -m kafkacodec.pipeline.jvm
	touch $(SPARK_STAMP)

$(TEST_STAMP): pyproject.toml | $(STAMP) jdk
	$(EXTRA) test > .venv/requirements-test.txt
	$(PIP) install -q -r .venv/requirements-test.txt
	$(PY) -m kafkacodec.pipeline.jvm
	touch $(TEST_STAMP)

$(BENCH_STAMP): pyproject.toml | $(TEST_STAMP)
	$(EXTRA) bench > .venv/requirements-bench.txt
	$(PIP) install -q -r .venv/requirements-bench.txt
	touch $(BENCH_STAMP)

$(NODE_STAMP): package.json
	npm install --no-audit --no-fund --silent
	touch $(NODE_STAMP)

# headless Chromium (Debian's package) for the test that opens the HTML docs
browser:
	@command -v chromium >/dev/null || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium)

# a JDK (Debian's package) for the tests that compile the generated Java readers with javac
jdk:
	@command -v javac >/dev/null || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q openjdk-17-jdk-headless)

generate: install
	$(KC) generate

check: install
	$(KC) generate --check

# the tests that kill the commands that change files at each point of their system calls
FAULT_TESTS := tests/change/test_faults.py tests/change/test_recover_snapshots.py tests/change/test_salvage_faults.py \
	tests/cli/test_write_command_faults.py tests/pipeline/test_logdir_layout_faults.py \
	tests/pipeline/test_sink_assigned_offsets.py tests/pipeline/test_sink_faults.py

# what the compiled modules replace: read again in pure Python by make test
PURE_TESTS := tests/storage/test_columnar.py tests/pipeline/test_sink_rows.py tests/codecs/test_kernels.py tests/storage/test_verify_deep.py tests/pipeline/test_pipeline_decode.py \
	tests/codecs/test_damage_valid_crc.py tests/codecs/test_decoded_objects.py tests/codecs/test_generated_api.py \
	tests/cross/test_cross_kafka_python.py tests/cross/test_cross_kafkajs.py tests/cross/test_cross_librdkafka.py \
	tests/codecs/test_damaged_input.py tests/storage/test_damaged_corpus.py tests/codecs/test_properties.py tests/storage/test_file_reading.py \
	tests/change/test_writer.py tests/dumplog/test_dump_format.py tests/change/test_convert.py tests/change/test_compaction.py \
	tests/codecs/test_record_view.py tests/codecs/test_differential.py

# the suite with the compiled modules (which must have been built), a test file per worker on
# each core, then the reading tests again in pure Python; the Spark tests are test-cluster's
test: $(TEST_STAMP) $(NODE_STAMP) browser jdk
	$(KC) generate --check
	KAFKACODEC_EXPECT_COMPILED=1 KAFKACODEC_FAULT_POINTS=sample $(PY) -m pytest -n 2 --dist loadfile -m "not spark and not compiles"
	KAFKACODEC_PURE=1 $(PY) -m pytest -q -n 2 --dist loadfile -m "not spark and not compiles" $(PURE_TESTS)

# the tests that start Spark: the data sources on local[2], export, the incident flow, and the README's
# recipe for a cluster on a standalone master and two workers (tests/pipeline/test_spark_cluster.py);
# and those that build test schemas' compiled readers with Cython (a minute, kept out of make test);
# then the commands that change files killed at every point (make test kills them at a sample)
test-cluster: $(TEST_STAMP) jdk
	KAFKACODEC_EXPECT_COMPILED=1 $(PY) -m pytest -n 2 --dist loadfile -m "spark or compiles"
	KAFKACODEC_EXPECT_COMPILED=1 $(PY) -m pytest -n 2 --dist loadfile -m "not spark" $(FAULT_TESTS)

# export goes through Spark: the spark extra (pyspark, pyarrow, pandas; Java 17 must be there)
run: $(SPARK_STAMP)
	$(KC) generate
	$(KC) sample --force build/sample-logs
	$(KC) verify build/sample-logs
	$(KC) lag build/sample-logs
	$(KC) cat build/sample-logs --topic 'shop\..*' --tail 2
	$(KC) clean build/sample-logs --policy compact,delete --min-cleanable-dirty-ratio 0
	$(KC) export --force build/sample-logs build/sample-parquet
	$(KC) sample --force --kraft-controller build/sample-controller
	$(KC) metadata build/sample-controller
	$(KC) metadata build/sample-controller --history orders-0

bench: $(BENCH_STAMP) $(NODE_STAMP)
	$(PY) bench/run.py

# both wheels (compiled kernels, and pure with KAFKACODEC_PURE=1) in fresh venvs
wheels:
	bash tests/packaging/smoke.sh

docs: install
	$(KC) generate
	$(KC) docs --html build/site

clean:
	rm -rf .venv node_modules build dist *.egg-info
