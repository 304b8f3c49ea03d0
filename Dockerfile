# syntax=docker/dockerfile:1
# telegram-bot: a Telegram-hosted AI agent that keeps the host's secrets away
# from the agent. Configure it with environment variables (docs/telegram-bot.md);
# no secret, token or .env file is ever copied into this image.
#
# The base images are pinned by exact tag: Debian trixie of a dated build,
# Go 1.26.8 and Node.js 24 (the active LTS). scripts/image-base builds the
# same three locally from Debian's packages for a machine without a registry.

# ---- build: a static binary ----
FROM golang:1.26.8-trixie AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
# Coolify passes the deployed commit as SOURCE_COMMIT (with "Include Source
# Commit in Build" on); the build context has no .git, so this is how
# `telegram-bot version` and the start-up line know which commit runs.
ARG SOURCE_COMMIT=""
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags="-s -w -X main.sourceCommit=${SOURCE_COMMIT}" \
      -o /out/telegram-bot ./cmd/telegram-bot

# ---- gh: GitHub's CLI at a pinned release, built from its Go module ----
# Debian trixie's gh is 2.46.0, from early 2024: well over a year behind
# GitHub's API. The pinned release is built from the module the Go proxy
# serves (go get, then go build: no download site, no prebuilt binary). Its
# own stage, before any of the bot's sources, so a rebuild of the bot finds
# it cached.
FROM golang:1.26.8-trixie AS gh
ARG GH_VERSION=2.95.0
WORKDIR /gh
RUN go mod init gh-build \
 && go get github.com/cli/cli/v2/cmd/gh@v${GH_VERSION} \
 && CGO_ENABLED=0 go build -trimpath \
      -ldflags="-s -w -X github.com/cli/cli/v2/internal/build.Version=${GH_VERSION}" \
      -o /out/gh github.com/cli/cli/v2/cmd/gh

# ---- Node.js: only its files are taken, into the Debian image below ----
FROM node:24.22.3-trixie-slim AS node

# ---- run: a toolbox for the agent, and nothing secret ----
FROM debian:trixie-20261124-slim
# EXTRA_PACKAGES: more Debian packages for the agent's toolbox, by name,
# separated by spaces (Coolify: a build argument of the resource), e.g.
# "ffmpeg build-essential". Only package names are taken.
ARG EXTRA_PACKAGES=""
RUN case "$EXTRA_PACKAGES" in *[!a-z0-9.+:=\ -]*) \
      echo "EXTRA_PACKAGES holds something that is not a Debian package name: $EXTRA_PACKAGES" >&2; exit 1;; esac \
 && apt-get update \
 && apt-get install -y --no-install-recommends \
      bash ca-certificates curl file git jq less make openssh-client procps \
      python3 python3-pip python3-venv ripgrep sqlite3 tini tzdata unzip wget \
      xz-utils zip $EXTRA_PACKAGES \
 && rm -rf /var/lib/apt/lists/*
COPY --from=gh --chown=root:root /out/gh /usr/local/bin/gh

COPY --from=node /usr/local/bin/node /usr/local/bin/node
COPY --from=node /usr/local/lib/node_modules /usr/local/lib/node_modules

# The bot runs as an unprivileged user with a fixed uid. This is what makes
# host hardening effective: root reads every process's /proc/<pid>/environ,
# hardened or not, so an agent running as root could read the bot's secrets.
#
# tini is PID 1 and holds the container's whole environment for as long as
# the container runs, as the same user as the agent: made execute-only
# (0711) like the bot, the kernel makes it non-dumpable, so its
# /proc/1/environ is closed to the agent.
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && chmod 0711 /usr/bin/tini \
 && groupadd --system --gid 10001 agent \
 && useradd --system --uid 10001 --gid agent --home-dir /home/agent --shell /bin/bash agent \
 && mkdir -p /data /workspace /home/agent \
 && chown agent:agent /data /workspace

# Root-owned and execute-only (0711): the kernel makes every process that
# executes a file its user cannot read non-dumpable from the first
# instruction. So the bot, and each `telegram-bot healthcheck` Docker starts
# with the container's full environment, can never be read through
# /proc/<pid>/environ by the agent's processes, not even in the moment
# before the binary hardens itself.
COPY --from=build --chown=root:root --chmod=0711 /out/telegram-bot /usr/local/bin/telegram-bot

# The bot's home, /home/agent, is root-owned and empty: a shell an operator
# opens in the container (Coolify's terminal) reads its start-up files from
# there, with every secret in its environment, so the agent must not be able
# to write them. The agent's processes get the workspace as their HOME.
#
# The agent cannot install system packages; what it installs with pip and
# npm goes to the workspace: `pip install --user` (and a plain `pip
# install`, which falls back to it) into /workspace/.local, `npm install -g`
# into /workspace/.npm-global, and both bin directories are on PATH, after
# the system's, so that nothing the agent installs shadows a system command.
# A venv (python3 -m venv) works as usual. PIP_BREAK_SYSTEM_PACKAGES lets
# pip install into the user site of Debian's Python; as uid 10001 it cannot
# touch the system's packages anyway.
ENV AGENT_DIR=/data \
    WORKSPACE_DIR=/workspace \
    HOME=/home/agent \
    PYTHONUSERBASE=/workspace/.local \
    PIP_BREAK_SYSTEM_PACKAGES=1 \
    npm_config_prefix=/workspace/.npm-global \
    npm_config_cache=/workspace/.npm \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/workspace/.local/bin:/workspace/.npm-global/bin

VOLUME ["/data"]
WORKDIR /workspace
USER 10001:10001

# Fresh when the polling loop touched its heartbeat in the last 90 s. The
# health check and the entrypoint run with the container's whole
# environment, so they name their binaries by absolute path: never a PATH
# lookup that could find a file the agent wrote.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
  CMD ["/usr/local/bin/telegram-bot", "healthcheck"]

# tini (PID 1) reaps the orphans the agent's processes leave (a daemonized
# server, a double fork) and passes SIGTERM on to the bot.
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/telegram-bot"]
CMD ["run"]
