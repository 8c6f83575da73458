# syntax=docker/dockerfile:1
# OnAir in a container: a virtual environment built from the hash-locked runtime dependencies
# (requirements-runtime.lock, the runtime subset of requirements.lock with the same pins), copied
# into a clean slim image that runs as an unprivileged user.
#
#   docker build -t onair .                                   # voice with the wheel's FFmpeg
#   docker build --build-arg WITH_FFMPEG=1 -t onair:ffmpeg .  # voice with Debian's FFmpeg
#   docker run --env-file .env -v ./config.toml:/etc/onair/config.toml:ro -v onair-data:/data onair
ARG PYTHON_VERSION=3.11

FROM python:${PYTHON_VERSION}-slim AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
RUN python -m venv /opt/onair
COPY requirements-runtime.lock ./
RUN /opt/onair/bin/pip install --no-cache-dir --require-hashes --no-deps \
        -r requirements-runtime.lock
COPY pyproject.toml README.md LICENSE ./
COPY bot ./bot
COPY cogs ./cogs
# The project itself: its dependencies are all in the venv already (hash-checked above).
RUN /opt/onair/bin/pip install --no-cache-dir --no-deps --no-build-isolation /src

FROM python:${PYTHON_VERSION}-slim
ARG WITH_FFMPEG=0
# Voice works without this (imageio-ffmpeg's static FFmpeg is in the venv); WITH_FFMPEG=1 adds
# Debian's package, which follows the base image's security updates (use it with
# ONAIR_FFMPEG=/usr/bin/ffmpeg in the environment).
# hadolint ignore=DL3008
RUN if [ "$WITH_FFMPEG" = "1" ]; then \
        apt-get update \
        && apt-get install -y --no-install-recommends ffmpeg \
        && rm -rf /var/lib/apt/lists/*; \
    fi \
    && groupadd --gid 10001 onair \
    && useradd --uid 10001 --gid 10001 --home-dir /data --create-home \
        --shell /usr/sbin/nologin onair
COPY --from=build /opt/onair /opt/onair
COPY config.example.toml /etc/onair/config.example.toml
# ONAIR_METRICS_PORT turns on /metrics and /healthz on the container's loopback for HEALTHCHECK.
ENV PATH=/opt/onair/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    ONAIR_METRICS_PORT=8080
WORKDIR /data
VOLUME ["/data"]
USER 10001:10001
HEALTHCHECK --interval=30s --timeout=5s --start-period=90s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=4)"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["onair"]
CMD ["run", "--config", "/etc/onair/config.toml"]
