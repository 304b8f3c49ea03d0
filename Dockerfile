# syntax=docker/dockerfile:1
# telegram-bot: a Telegram-hosted AI agent that keeps the host's secrets away
# from the agent. Configure it with environment variables (docs/telegram-bot.md);
# no secret, token or .env file is ever copied into this image.

# ---- build: a static binary ----
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/telegram-bot ./cmd/telegram-bot

# ---- run: what the agent's tools need, and nothing secret ----
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      bash ca-certificates tzdata git curl nodejs npm \
 && rm -rf /var/lib/apt/lists/*

# The bot runs as an unprivileged user with a fixed uid. This is what makes
# host hardening effective: root reads every process's /proc/<pid>/environ,
# hardened or not, so an agent running as root could read the bot's secrets.
RUN groupadd --system --gid 10001 agent \
 && useradd --system --uid 10001 --gid agent --home-dir /workspace --shell /bin/bash agent \
 && mkdir -p /data /workspace \
 && chown agent:agent /data /workspace

# Root-owned and execute-only (0711): the kernel makes every process that
# executes a file its user cannot read non-dumpable from the first
# instruction. So the bot, and each `telegram-bot healthcheck` Docker starts
# with the container's full environment, can never be read through
# /proc/<pid>/environ by the agent's processes, not even in the moment
# before the binary hardens itself.
COPY --from=build --chown=root:root --chmod=0711 /out/telegram-bot /usr/local/bin/telegram-bot

ENV AGENT_DIR=/data \
    WORKSPACE_DIR=/workspace \
    HOME=/workspace \
    npm_config_cache=/workspace/.npm

VOLUME ["/data"]
WORKDIR /workspace
USER 10001:10001

# Fresh when the polling loop touched its heartbeat in the last 90 s.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
  CMD ["telegram-bot", "healthcheck"]

ENTRYPOINT ["telegram-bot"]
CMD ["run"]
