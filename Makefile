setup:
	bash scripts/setup.sh

demo: setup
	bash scripts/demo.sh

test:
	python3 -m pytest -n 2 -q

.PHONY: setup demo test
