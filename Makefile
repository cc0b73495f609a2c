setup:
	bash scripts/setup.sh

demo: setup
	bash scripts/demo.sh

test:
	python3 -m pytest -n 2 --dist loadgroup -q

stress:
	patchwrite stress --out results/

bench:
	python3 bench/bench_compile.py
	python3 bench/bench_evidence.py
	python3 bench/bench_stress.py

.PHONY: setup demo test stress bench
