# syntax=docker/dockerfile:1
# The controller image. Build stage: Debian bookworm running the project's own setup step and
# build (the same two commands a developer runs). Runtime stage: bookworm-slim with only the
# binary and the Debian packages of the shared libraries it links (tests/deploy/t_image.sh
# checks that list against `ldd` of the built binary), as user 65532.
#
#   docker build -t propertyoverride:0.1.0 .
#
# PO_VERSION must equal the CMake project version (CMakeLists.txt), which is compiled into
# `propertyoverride version`; the runtime stage fails the build when they differ.

FROM debian:bookworm AS build
WORKDIR /src
COPY . .
RUN scripts/setup.sh
RUN make

FROM debian:bookworm-slim AS runtime
ARG PO_VERSION=0.1.0
ARG PO_REVISION=unknown
LABEL org.opencontainers.image.title="propertyoverride" \
      org.opencontainers.image.description="Kubernetes controller and admission webhook that validates and applies Consul builtin/property-override Envoy patches" \
      org.opencontainers.image.version="${PO_VERSION}" \
      org.opencontainers.image.revision="${PO_REVISION}" \
      org.opencontainers.image.source="https://github.com/propertyoverride/propertyoverride" \
      org.opencontainers.image.base.name="docker.io/library/debian:bookworm-slim"
# The packages of the libraries the binaries link directly (their own dependencies come with them;
# libjemalloc2 is the controller's malloc, cmake/allocator.cmake).
RUN apt-get update \
 && apt-get install -y --no-install-recommends libcurl4 libgnutls30 libmicrohttpd12 libyaml-0-2 libzstd1 libjemalloc2 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/propertyoverride /usr/local/bin/propertyoverride
# `propertyoverride controller` execs this, from the same folder (controller/cli/CMakeLists.txt).
COPY --from=build /src/build/propertyoverride-controller /usr/local/bin/propertyoverride-controller
RUN test "$(/usr/local/bin/propertyoverride version | head -n 1)" = "propertyoverride ${PO_VERSION}"
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/propertyoverride"]
CMD ["controller"]
