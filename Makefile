# demo: only what the demo needs (no model, no test tools); test: everything the suite needs, then the suite
setup:
	bash scripts/setup.sh test

demo:
	bash scripts/setup.sh demo
	bash scripts/demo.sh

test:
	bash scripts/setup.sh test
	python3 -m pytest -n 2 --dist loadgroup -q

stress:
	patchwrite stress --out results/

bench:
	python3 bench/bench_compile.py
	python3 bench/bench_evidence.py
	python3 bench/bench_stress.py

.PHONY: setup demo test stress bench
