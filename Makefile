# Forge Workbook — two commands set everything up:
#   make lab    install into .venv and open the workbook in JupyterLab
#   make test   install into .venv and run the whole test suite
SHELL := /bin/bash
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.forge-workbook-installed
PORT ?= 8888
JOBS ?= auto

.PHONY: lab hub test install verify typecheck imports nbval course-tests bench clean help

# The workbook's edition (course/edition.toml in a bundle released with --lang zh): make speaks it, installs
# JupyterLab's Simplified Chinese language pack and opens JupyterLab in Chinese (Settings → Language switches back).
ZH := $(shell grep -qs '^language *= *"zh' course/edition.toml && echo yes)
ifeq ($(ZH),yes)
SAY_PYTHON = Forge Workbook 需要 Python 3.11 或更高版本；$(PYTHON) 是 $$($(PYTHON) -V 2>&1)。请设置 PYTHON=python3.11
SAY_CREATING = 正在创建 $(VENV)…
SAY_INSTALLING = 正在把 forge-workbook 及其依赖安装到 $(VENV)（第一次安装在测量过的机器上用了 18–255 秒，机器越忙越久）…
SAY_OWN_INDEX = pip 配置了自己的软件包索引：改用 pip 安装（比 uv 慢）
SAY_UV_FAILED = uv 没有完成：改用 pip 安装（较慢）
SAY_FAILED = 安装失败：请看上面的输出，或者试试 INSTALLER=pip
SAY_OPENING = 正在用 JupyterLab 打开 $$START——下面会打印它的地址（带令牌）；按 Ctrl-C 停止。
SAY_CHECK_ALL = == 实验包：检查练习册的每个阶段（forgelab check all）
SAY_HELP_LAB = make lab    — 安装到 $(VENV)，并在 JupyterLab 中打开练习册
SAY_HELP_TEST = make test   — 检查练习册的每个阶段（forgelab check all）
SAY_HUB_REPO = make hub 在课程仓库里运行一个班级（它从课程仓库发布学员的实验包）；实验包里没有这个目标
SAY_TYPECHECK_REPO = 类型门禁检查的是课程自己的工具：它在课程仓库里运行，不在实验包里
SAY_IMPORTS_REPO = 依赖规则检查的是课程自己的工具：它在课程仓库里运行，不在实验包里
SAY_BENCH_REPO = 基准测试属于课程仓库，不在实验包里
SAY_MUTATION_REPO = 变异测试需要参考实现：它在课程仓库里运行，不在实验包里
else
SAY_PYTHON = Forge Workbook needs Python 3.11 or newer; $(PYTHON) is $$($(PYTHON) -V 2>&1). Set PYTHON=python3.11
SAY_CREATING = creating $(VENV)…
SAY_INSTALLING = installing forge-workbook and its dependencies into $(VENV) (the first time took 18–255 s where it was measured, the longer the busier the machine)…
SAY_OWN_INDEX = pip is configured with its own package index: installing with pip (slower than uv)
SAY_UV_FAILED = uv did not finish: installing with pip instead (slower)
SAY_FAILED = installation failed: see the output above, or try INSTALLER=pip
SAY_OPENING = Opening JupyterLab on $$START — the URL (with its token) is printed below; Ctrl-C stops it.
SAY_CHECK_ALL = == learner bundle: checking every stage of your workbook (forgelab check all)
SAY_HELP_LAB = make lab    — install into $(VENV) and open the workbook in JupyterLab
SAY_HELP_TEST = make test   — check every stage of your workbook (forgelab check all)
SAY_HUB_REPO = make hub runs a class from the course repository (it releases the learners' bundle from it)
SAY_TYPECHECK_REPO = the type gate checks the course's tooling: it runs in the course repository
SAY_IMPORTS_REPO = the dependency rule checks the course's tooling: it runs in the course repository
SAY_BENCH_REPO = the benchmarks are part of the course repository, not of the learner bundle
SAY_MUTATION_REPO = mutation testing needs the reference solutions: it runs in the course repository, not the learner bundle
endif

help:
	@echo "$(SAY_HELP_LAB)"
	@if [ -d solutions ]; then \
	  echo "make test   — install into $(VENV) and run the whole test suite"; \
	  echo "make hub    — run the class on JupyterHub on this machine (EDITION=zh, INSTRUCTORS=a,b, HUB_PORT=8000)"; \
	  echo "make bench  — run the benchmarks and print their ratios"; \
	  echo "make typecheck — mypy --strict over forgelab/ and forge/ (also part of make test)"; \
	  echo "make imports — the dependency rule of forgelab/'s packages (lint-imports; also part of make test)"; \
	else echo "$(SAY_HELP_TEST)"; fi

# The installer: uv (installed into the venv by pip, then resolving and downloading in parallel) is about
# three times as fast as pip for the ~110 packages of JupyterLab and friends. pip is used instead when
# INSTALLER=pip, when pip is configured with its own index (uv does not read pip's configuration), or
# when uv fails for any reason. Neither compiles bytecode up front (quicker); then the packages the command line
# and the judge load are compiled, once (python -m forgelab.cli.bytecode): the judge's sessions write no
# bytecode, so without this every check compiled pytest and Hypothesis from source again.
INSTALLER ?= uv
PIP := $(BIN)/python -m pip --disable-pip-version-check
# The course repository installs its development tools too (test suite, browsers' driver, type gate, mutation
# testing, catalogs); a learner bundle (no solutions/) needs only the workbook and JupyterLab.
EXTRAS := $(if $(wildcard solutions/forge),[dev],$(if $(ZH),[zh],))
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.d

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' || \
	  { echo "$(SAY_PYTHON)"; exit 2; }
	@test -x $(BIN)/python || { echo "$(SAY_CREATING)"; $(PYTHON) -m venv $(VENV); }
	@echo "$(SAY_INSTALLING)"
	@use_uv=no; \
	 if [ "$(INSTALLER)" = "uv" ]; then \
	   if [ -n "$$PIP_INDEX_URL" ] || $(PIP) config list 2>/dev/null | grep -q '[.]index-url='; then \
	     echo "$(SAY_OWN_INDEX)"; \
	   elif $(PIP) install --quiet uv >/dev/null 2>&1; then use_uv=yes; fi; fi; \
	 if [ $$use_uv = yes ] && $(BIN)/uv pip install --quiet --python $(BIN)/python -e '.$(EXTRAS)'; then :; else \
	   if [ $$use_uv = yes ]; then echo "$(SAY_UV_FAILED)"; fi; \
	   $(PIP) install --quiet --no-compile -e '.$(EXTRAS)' 2>&1 | grep -v "is ignored: it is neither" || true; fi
	@$(BIN)/python -c 'import forgelab, nbval, jupyterlab, pydantic' || { echo "$(SAY_FAILED)"; exit 2; }
	@$(BIN)/python -m forgelab.cli.bytecode >/dev/null || true
	@touch $(STAMP)

install: $(STAMP)

# JupyterLab is rooted at the workbook folder, so its file browser reaches forge/ (the files you edit) and
# the notebooks' figures under course/; it opens on the opening notebook of the workbook's edition.
# The workbook's JupyterLab asks nothing at start: no "get notified about official Jupyter news?" pop-up
# and no update check. These are defaults of this venv's JupyterLab only (overrides.d), never changes to
# your own JupyterLab settings; change them in Settings → Notifications if you like. Its workspace (the tabs
# it reopens) is kept in this venv too, so two workbooks — the English and the Chinese bundle — never share one.
LAB_WORKSPACES := $(abspath $(VENV))/share/jupyter/lab/workspaces
lab: $(STAMP)
	@mkdir -p $(LAB_OVERRIDES) && cp forgelab/data/jupyterlab-overrides.json $(LAB_OVERRIDES)/forge-workbook.json
	@if [ "$(ZH)" = yes ]; then cp forgelab/data/jupyterlab-overrides-zh.json $(LAB_OVERRIDES)/forge-workbook-zh.json; \
	 else rm -f $(LAB_OVERRIDES)/forge-workbook-zh.json; fi
	@ROOT_FLAG=""; if [ "$$(id -u)" = "0" ]; then ROOT_FLAG="--allow-root"; fi; \
	 START=notebooks/00-opening.ipynb; \
	 if [ "$(ZH)" = yes ]; then START=notebooks/zh/00-opening.ipynb; fi; \
	 echo "$(SAY_OPENING)"; \
	 mkdir -p "$(LAB_WORKSPACES)"; \
	 $(BIN)/jupyter lab --ServerApp.root_dir=. --LabApp.default_url=/lab/tree/$$START \
	   --LabApp.workspaces_dir="$(LAB_WORKSPACES)" --ServerApp.ip=127.0.0.1 --ServerApp.port=$(PORT) $$ROOT_FLAG

# The class on JupyterHub (docs/instructor.md): JupyterHub and NativeAuthenticator into $(VENV), configurable-http-proxy
# from npm into node_modules/ (package.json), the learners' bundle released from the committed course into build/hub/,
# then `forgelab hub`: the hub on 127.0.0.1:$(HUB_PORT) with SQLite and the course service; each learner gets their own
# workbook on first sign-in. EDITION=zh gives the Chinese workbook and JupyterLab in Chinese. INSTRUCTORS=a,b names
# the instructors (hub group `instructors`, admins who approve sign-ups).
comma := ,
HUB_PORT ?= 8000
EDITION ?= en
INSTRUCTORS ?= instructor
# The npm packages of package.json (the hub's proxy, Ajv for the course page's validator): make hub needs them,
# make test installs them where npm is there (the hub and schema tests skip without them).
PROXY := node_modules/.bin/configurable-http-proxy
NPM_INSTALL := npm install --no-audit --no-fund --silent
HUB_BUNDLE := build/hub/forge-workbook-lab$(if $(filter zh,$(EDITION)),-zh,).zip
hub: $(STAMP)
	@test -d solutions || { echo "$(SAY_HUB_REPO)"; exit 2; }
	@$(BIN)/python -c 'import jupyterhub, nativeauthenticator' 2>/dev/null || { \
	  echo "installing JupyterHub and NativeAuthenticator into $(VENV)…"; \
	  $(PIP) install --quiet 'jupyterhub>=5.2,<7' 'jupyterhub-nativeauthenticator>=1.3'; }
	@test -x $(PROXY) || { \
	  command -v npm >/dev/null || { echo "make hub needs npm (Node.js 18 or newer) for configurable-http-proxy"; exit 2; }; \
	  echo "installing configurable-http-proxy from npm into node_modules/…"; $(NPM_INSTALL); }
	@mkdir -p build/hub && echo "releasing the learners' bundle ($(EDITION)) into build/hub/…" && \
	  $(BIN)/forgelab release --lang $(EDITION) --out build/hub >/dev/null
	@mkdir -p $(LAB_OVERRIDES) && cp forgelab/data/jupyterlab-overrides.json $(LAB_OVERRIDES)/forge-workbook.json
	@if [ "$(EDITION)" = zh ]; then cp forgelab/data/jupyterlab-overrides-zh.json $(LAB_OVERRIDES)/forge-workbook-zh.json; \
	 else rm -f $(LAB_OVERRIDES)/forge-workbook-zh.json; fi
	@$(BIN)/forgelab --lang $(EDITION) hub --port $(HUB_PORT) --bundle $(HUB_BUNDLE) \
	  --proxy $(PROXY) $(foreach name,$(subst $(comma), ,$(INSTRUCTORS)),--instructor $(name))

test: $(STAMP)
	@if [ ! -d solutions ] || [ ! -d tests/course ]; then \
	  echo "$(SAY_CHECK_ALL)"; \
	  $(BIN)/forgelab check all; exit $$?; fi
	@echo "== type gate (mypy --strict over forgelab/ and forge/)"; $(BIN)/mypy
	@echo "== the dependency rule of forgelab/ (lint-imports: pyproject.toml [tool.importlinter])"; $(BIN)/lint-imports --no-cache
	@echo "== generated artefacts are current"; $(BIN)/forgelab build --check
	@echo "== course contracts (solutions pass, starters unsolved, fault labs hold, mutants die)"; $(BIN)/forgelab verify-course --mutants
	@echo "== notebooks under nbval against the solution target"; $(BIN)/forgelab nbval
	@if [ ! -x $(PROXY) ] && command -v npm >/dev/null; then \
	  echo "== configurable-http-proxy and ajv from npm into node_modules/ (package.json), for the hub and schema tests"; \
	  $(NPM_INSTALL) || echo "npm install failed: the hub tests will be skipped, each saying why"; fi
	@echo "== course test suite"; $(BIN)/python -m pytest -n $(JOBS) --dist loadgroup --durations=25 tests/course

verify: $(STAMP)
	$(BIN)/forgelab verify-course --mutants

typecheck: $(STAMP)
	@test -d solutions || { echo "$(SAY_TYPECHECK_REPO)"; exit 2; }
	$(BIN)/mypy

imports: $(STAMP)
	@test -d solutions || { echo "$(SAY_IMPORTS_REPO)"; exit 2; }
	$(BIN)/lint-imports --no-cache

nbval: $(STAMP)
	$(BIN)/forgelab nbval

bench: $(STAMP)
	@test -d benchmarks || { echo "$(SAY_BENCH_REPO)"; exit 2; }
	@for script in benchmarks/bench_*.py; do echo "== $$script"; $(BIN)/python $$script || exit $$?; echo; done

clean:
	rm -rf build .forgelab labs test-artifacts

# Mutation testing (mutmut) of the reference modules against their own stage tests; fails below
# 95 % killed per module, listed equivalents excluded. Two to three minutes on 2 CPUs.
.PHONY: mutation
mutation: $(STAMP)
	@test -d solutions || { echo "$(SAY_MUTATION_REPO)"; exit 2; }
	$(BIN)/python benchmarks/mutation.py
