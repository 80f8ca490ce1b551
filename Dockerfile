# syntax=docker/dockerfile:1
# snapply in a container: a static binary on distroless, for CI systems
# other than GitHub Actions and for `docker run` (README, Install). The
# GitHub Action does not use it: it is a composite action that runs the
# binary on the runner.
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
# Root, so that it can write into a mounted checkout whatever its owner's
# uid; snapply gives the store it writes there to the directory's owner.
USER 0:0
ENTRYPOINT ["/usr/local/bin/snapply"]
# Arguments are a snapply command line (`docker run IMAGE plan DIR`); none
# prints the help.
CMD ["--help"]
