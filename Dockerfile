# syntax=docker/dockerfile:1
# snapply's container action image: a static binary on distroless.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/snapply/snapply/internal/version.Version=${VERSION} -X github.com/snapply/snapply/internal/version.Commit=${COMMIT}" \
      -o /out/snapply ./cmd/snapply

FROM gcr.io/distroless/static-debian12
COPY --from=build /out/snapply /usr/local/bin/snapply
# GitHub runs container actions as root and mounts the workspace owned by
# the runner: a non-root user could not write the store there.
USER 0:0
ENTRYPOINT ["/usr/local/bin/snapply"]
CMD ["action"]
