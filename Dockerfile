# Cardex container image: the cardex binary on a slim Debian runtime, plus
# the loopback demo fleet (cardex-fleet) and the load generator
# (cardex-bench) for the docker-compose.yml deployment and load tests.
#
#   docker build -t cardex .
#   docker run -p 8080:8080 -v cardex-data:/data cardex
#
# Every `cardex serve` flag has a CARDEX_<FLAG> environment twin
# (CARDEX_DATABASE_URL, CARDEX_ALLOW_NETWORKS, …; `cardex serve --help`).

# Build stage: cgo is on because the SQLite driver (mattn/go-sqlite3) is C.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ENV CGO_ENABLED=1
RUN go build -trimpath -ldflags="-s -w" -o /out/cardex ./cmd/cardex \
 && go build -trimpath -ldflags="-s -w" -o /out/cardex-fleet ./agentfleet/cmd/fleet \
 && go build -trimpath -ldflags="-s -w" -o /out/cardex-bench ./cmd/cardex-bench

# Runtime: glibc for the cgo binary, CA roots for card and key-set fetches
# over HTTPS, tzdata for log timestamps, and nothing else.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates tzdata \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 cardex \
 && useradd --system --uid 10001 --gid cardex --home-dir /data --shell /usr/sbin/nologin cardex \
 && mkdir -p /data \
 && chown cardex:cardex /data
COPY --from=build /out/cardex /out/cardex-fleet /out/cardex-bench /usr/local/bin/
# /data holds the SQLite database (without CARDEX_DATABASE_URL) and always
# the process's own search index; the image's ownership carries over to a
# fresh named volume, so the non-root user can write it.
VOLUME ["/data"]
USER cardex:cardex
WORKDIR /data
EXPOSE 8080
ENTRYPOINT ["cardex"]
CMD ["serve", "--addr", ":8080", "--data", "/data"]
