# syntax=docker/dockerfile:1
#
# docs-mcp in a container: the index is built from a markdown corpus while the image is built, and
# the image serves it to AI coding agents over MCP streamable HTTP on port 20310.
#
# The default search (full-text + phrase, and each section's page and heading names embedded with
# the bundled all-MiniLM-L6-v2 model, offline), on the example corpus or on your own folder:
#   docker build -t docs-mcp .
#   docker build --build-arg DOCS_DIR=./docs -t docs-mcp .
#   docker run --rm -p 20310:20310 docs-mcp
#
# Hybrid search with the bundled local model (all-MiniLM-L6-v2, run in process; no key, no network):
#   docker build --build-arg EMBEDDING_PROVIDER=local --build-arg DOCS_DIR=./docs -t docs-mcp .
#   docker run --rm -p 20310:20310 docs-mcp
#
# Hybrid search with OpenAI embeddings. The key reaches the build as a BuildKit secret, so it is
# never stored in a layer; at run time the server needs it again to embed queries:
#   docker build --build-arg EMBEDDING_PROVIDER=openai \
#       --secret id=openai_api_key,env=OPENAI_API_KEY --build-arg DOCS_DIR=./docs -t docs-mcp .
#   docker run --rm -p 20310:20310 -e OPENAI_API_KEY docs-mcp
#
# Then point an MCP client at http://localhost:20310/mcp (health: http://localhost:20310/healthz).
# tests/test_docker_recipe.py runs both stages' commands outside a container on every CI run.

ARG PYTHON_VERSION=3.11

# ---------------------------------------------------------------------------------------------------
# build: install the indexer and the server from uv.lock, then index the corpus.
FROM python:${PYTHON_VERSION}-slim AS build

ARG UV_VERSION=0.13.9
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never
RUN pip install --no-cache-dir "uv==${UV_VERSION}"

WORKDIR /src
COPY pyproject.toml uv.lock ./
COPY packages ./packages
COPY scripts/venv_from_lock.py ./scripts/

# Two environments from the same lock file: /opt/indexer (docs-mcp) is used only in this stage;
# /opt/docs-mcp (docs-mcp-server) is copied into the runtime image.
RUN --mount=type=cache,target=/root/.cache/uv \
    python scripts/venv_from_lock.py --venv /opt/indexer --wheels /tmp/wheels docs-mcp-core docs-mcp-cli \
    && python scripts/venv_from_lock.py --venv /opt/docs-mcp --wheels /tmp/wheels docs-mcp-core docs-mcp-server

# The corpus: a folder inside the build context.
ARG DOCS_DIR=examples/docs
# headings (docs-mcp build's default: lexical, plus the heading-path vectors of the model shipped in
# docs-mcp-core), none (lexical only, the original's index), local (that model embeds every chunk
# too, no key) or openai (needs the openai_api_key secret).
ARG EMBEDDING_PROVIDER=headings
# Optional: embedding model, an OpenAI-compatible endpoint, and the corpus description agents see
# in the search tool's description.
ARG EMBEDDING_MODEL=""
ARG EMBEDDING_BASE_URL=""
ARG DOCS_DESCRIPTION="Documentation corpus"
COPY ${DOCS_DIR} /corpus

# The embedding cache lives in a BuildKit cache mount, so rebuilding after a docs change only pays
# for the chunks that changed; it never ends up in the image.
RUN --mount=type=secret,id=openai_api_key \
    --mount=type=cache,id=docs-mcp-embeddings,target=/var/cache/docs-mcp \
    if [ -s /run/secrets/openai_api_key ]; then \
        OPENAI_API_KEY="$(cat /run/secrets/openai_api_key)"; export OPENAI_API_KEY; \
    fi \
    && /opt/indexer/bin/docs-mcp build \
        --docs-dir /corpus \
        --out /index \
        --cache-dir /var/cache/docs-mcp \
        --description "${DOCS_DESCRIPTION}" \
        --embedding-provider "${EMBEDDING_PROVIDER}" \
        ${EMBEDDING_MODEL:+--embedding-model "${EMBEDDING_MODEL}"} \
        ${EMBEDDING_BASE_URL:+--embedding-base-url "${EMBEDDING_BASE_URL}"}

# ---------------------------------------------------------------------------------------------------
# runtime: the server's environment and the index, run as an unprivileged user.
FROM python:${PYTHON_VERSION}-slim AS runtime

# Shown by GET /healthz and in the DOCS-MCP response header when set.
ARG GIT_COMMIT=""
ARG BUILD_DATE=""

LABEL org.opencontainers.image.title="docs-mcp" \
      org.opencontainers.image.description="MCP server for searching markdown SDK documentation" \
      org.opencontainers.image.licenses="AGPL-3.0-only" \
      org.opencontainers.image.revision="${GIT_COMMIT}" \
      org.opencontainers.image.created="${BUILD_DATE}"

RUN useradd --system --user-group --uid 10001 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin docs-mcp

COPY --from=build /opt/docs-mcp /opt/docs-mcp
COPY --from=build /index /index

ENV PATH="/opt/docs-mcp/bin:${PATH}" \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    GIT_COMMIT="${GIT_COMMIT}" \
    BUILD_DATE="${BUILD_DATE}"

# Numeric, so that runtimes enforcing runAsNonRoot can verify it.
USER 10001:10001
WORKDIR /index
EXPOSE 20310

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:20310/healthz', timeout=4).status == 200 else 1)"]

CMD ["docs-mcp-server", "--index-dir", "/index", "--transport", "http", "--host", "0.0.0.0", "--port", "20310"]
