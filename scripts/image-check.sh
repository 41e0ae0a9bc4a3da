#!/usr/bin/env bash
# Check the computer image: every promised tool runs, as the user `computer`.
#
# Starts a throwaway container (removed on exit, whatever happens), runs one
# check per tool, prints a line for each, and exits non-zero when any fails.
#
# Env:
#   COMPUTER_USE_IMAGE  image to check (computer-use-mcp:dev)
#   CHECK_NETWORK=1     also check https to the npm registry and PyPI from
#                       inside (needs those registries reachable)
#   CHECK_HEALTH=1      also start computerd itself and call its health
#                       endpoint

# The checks are shell text run inside the container: single quotes on purpose.
# shellcheck disable=SC2016
set -euo pipefail

image=${COMPUTER_USE_IMAGE:-computer-use-mcp:dev}
name=computer-use-check-$$
failures=0
containers=()

say() { printf 'image-check: %s\n' "$*" >&2; }
cleanup() {
    if [ ${#containers[@]} -gt 0 ]; then
        docker rm -f "${containers[@]}" >/dev/null 2>&1 || true
    fi
}
trap cleanup EXIT

docker image inspect "$image" >/dev/null 2>&1 \
    || { say "no image \`$image\`; build it with scripts/build-image.sh"; exit 1; }

# check NAME EXPECT COMMAND: runs COMMAND in a login shell in the container,
# as computerd's shell tool does; passes when it exits 0 and its output
# matches the extended regex EXPECT ('' matches anything). Prints the first
# line of output either way. check_plain: the same in a non-login shell.
check() { run_check -lc "$@"; }
check_plain() { run_check -c "$@"; }
run_check() {
    local flags=$1 what=$2 expect=$3 cmd=$4 out status=0
    out=$(docker exec "$name" bash "$flags" "$cmd" 2>&1) || status=$?
    if [ "$status" -eq 0 ] && { [ -z "$expect" ] || grep -Eq -- "$expect" <<<"$out"; }; then
        printf 'ok    %-14s %s\n' "$what" "$(head -n 1 <<<"$out")"
    else
        failures=$((failures + 1))
        printf 'FAIL  %-14s exit %s, expected /%s/, got:\n' "$what" "$status" "$expect"
        # shellcheck disable=SC2001 # a prefix on every line, not one substitution
        sed 's/^/          | /' <<<"$out" | head -n 20
    fi
}

label=$(docker image inspect -f '{{index .Config.Labels "computer-use.version"}}' "$image")
say "checking $image (computer-use.version=${label:-missing})"
if [ -z "$label" ]; then
    failures=$((failures + 1))
    echo "FAIL  label          the image has no computer-use.version label"
fi

# The tools need no computerd: keep the container alive with tini + sleep.
containers+=("$name")
docker run -d --name "$name" --entrypoint /usr/bin/tini "$image" -- sleep infinity >/dev/null

# The user and their environment.
check user        '^computer 1000 /home/computer computer$' 'echo "$(id -un) $(id -u) $HOME $(stat -c %U "$HOME")"'
check sudo        '^root$'                  'sudo -n true && sudo -n id -un'
check shell       '^/bin/bash$'             'getent passwd computer | cut -d: -f7'
check path-login  '^/home/computer/\.local/bin:' 'echo "$PATH"'
check_plain path  '^/home/computer/\.local/bin:' 'echo "$PATH"'
check locale      'LANG=en_US\.UTF-8'       'locale 2>&1 | grep -v "^LC_ALL=" | grep LANG; ! locale 2>&1 | grep -q "Cannot set"'
check locale-gen  '^en_US\.utf8$'           'locale -a | grep en_US'
check tzdata      'UTC|GMT'                 'TZ=Etc/UTC date +%Z'
check certs       ''                        'test -s /etc/ssl/certs/ca-certificates.crt && grep -c "BEGIN CERT" /etc/ssl/certs/ca-certificates.crt'

# Languages and package managers.
check python3     '^Python 3\.'             'python3 --version'
check pip         '^pip '                   'pip3 --version'
check venv        '^pip '                   'python3 -m venv /tmp/venv && /tmp/venv/bin/pip --version'
check uv          '^uv [0-9]'               'uv --version'
check node        '^v24\.'                  'node --version'
check node-path   '^/usr/local/bin/node$'   'command -v node; ! dpkg -s nodejs >/dev/null 2>&1'
check npm         '^[0-9]+\.'               'npm --version'
check npx         '^[0-9]+\.'               'npx --version'
check npm-prefix  '^/home/computer/\.local$' 'npm config get prefix'
check ruby        '^ruby 3\.'               'ruby --version'
check fish        '^fish'                   'fish --version'
check gcc         '^gcc'                    'gcc --version'
check g++         '^g\+\+'                  'g++ --version'
check make        '^GNU Make'               'make --version'
check pkg-config  '^[0-9]'                  'pkg-config --version'
check compile     '^hello$'                 'printf "#include <stdio.h>\nint main(void){puts(\"hello\");}\n" >/tmp/h.c && gcc -o /tmp/h /tmp/h.c && /tmp/h'

# Command-line tools.
check git         '^git version'            'git --version'
check gh          '^gh version'             'gh --version'
check aws         '^aws-cli/2\.'            'aws --version'
check rg          '^ripgrep'                'rg --version'
check magick      '^Version: ImageMagick'   'magick -version'
check convert     '^Version: ImageMagick'   'convert -version 2>&1'
check jq          '^jq-'                    'jq --version'
check curl        '^curl'                   'curl --version'
check zip         'Zip'                     'zip -v | head -n 2 | tail -n 1'
check unzip       '^UnZip'                  'unzip -v'
check misc        ''                        'command -v less nano ps ssh tini | tr "\n" " "'

# Desktop programs.
# Xvnc prints no version of its own: ask dpkg once it has shown it starts.
check Xvnc        '^TigerVNC [0-9]'         'Xvnc -version >/dev/null 2>&1 && dpkg-query -W -f="TigerVNC \${Version}" tigervnc-standalone-server'
check vncpasswd   '/vncpasswd$'             'command -v vncpasswd'
check fluxbox     '^Fluxbox'                'fluxbox -version'
check xterm       'XTerm'                   'xterm -version'
check xdotool     '^xdotool'                'xdotool --version'
check x11-utils   '/xdpyinfo$'              'command -v xdpyinfo'
check xclip       '^xclip version'          'xclip -version 2>&1'
check xsel        '^xsel'                   'xsel --version 2>&1'
check autocutsel  '/autocutsel$'            'command -v autocutsel'
check dbus-x11    '/dbus-launch$'           'command -v dbus-launch'
check dbus-daemon '/dbus-daemon$'           'command -v dbus-daemon'
check at-spi      'at-spi-bus-launcher$'    'test -x /usr/libexec/at-spi-bus-launcher && echo /usr/libexec/at-spi-bus-launcher'
check zenity      '^[0-9]'                  'zenity --version 2>/dev/null'
check lo-gtk3     'libvclplug_gtk3lo'       'ls /usr/lib/libreoffice/program/ | grep -m1 libvclplug_gtk3lo'
check xdg-open    'computer-use-browser'    'xdg-mime query default x-scheme-handler/https'
check launcher    '/computer-use-launch$'   'command -v computer-use-launch'
check chromium    '^Chromium 1'             'chromium --version'
check chromium-run 'checked'                'timeout 60 chromium --headless --disable-gpu --dump-dom "data:text/html,<p>checked</p>" 2>/dev/null'
check libreoffice '^LibreOffice'            'libreoffice --version'
check soffice-run '^%PDF'                   'cd /tmp && echo checked >doc.txt && timeout 120 soffice --headless --convert-to pdf doc.txt >/dev/null 2>&1 && head -c 4 doc.pdf'
check fonts-cjk   'Noto (Sans|Serif) CJK'   'fc-list :lang=ja family | grep -m1 "CJK"'
check fonts-emoji 'Noto Color Emoji'        'fc-list | grep -m1 "Noto Color Emoji"'
check fonts-latin 'DejaVu Sans'             'fc-list | grep -m1 "DejaVu Sans"'
check computerd   '/computerd$'             'test -x /usr/local/bin/computerd && echo /usr/local/bin/computerd'

# A screen as computerd opens one: Xvnc, then Fluxbox with the baked-in
# config, which must paint the plain background and still run a moment later.
check screen      '^fluxbox up on 1280x800$' '
    Xvnc :9 -geometry 1280x800 -depth 24 -SecurityTypes None -nolisten tcp -rfbport 5909 >/tmp/xvnc.log 2>&1 &
    for i in $(seq 100); do [ -S /tmp/.X11-unix/X9 ] && break; sleep 0.1; done
    [ -S /tmp/.X11-unix/X9 ] || { echo "no socket /tmp/.X11-unix/X9"; cat /tmp/xvnc.log; exit 1; }
    export DISPLAY=:9
    fluxbox -rc /usr/local/share/computer-use/fluxbox/init >/tmp/fluxbox.log 2>&1 &
    fb=$!
    for i in $(seq 100); do xprop -root _NET_SUPPORTING_WM_CHECK 2>/dev/null | grep -q window && break; sleep 0.1; done
    for i in $(seq 50); do import -window root -crop 1x1+5+795 txt:- | grep -q "srgb(47,59,74)" && break; sleep 0.1; done
    import -window root -crop 1x1+5+795 txt:- | grep -q "srgb(47,59,74)" || { echo "background is not #2f3b4a"; exit 1; }
    sleep 1
    kill -0 $fb || { cat /tmp/fluxbox.log; exit 1; }
    echo "fluxbox up on $(xdotool getdisplaygeometry | tr " " x)"'

if [ "${CHECK_NETWORK:-0}" = 1 ]; then
    # https from inside, through the system CA store (and any extra CA).
    check https-npm  '^[0-9]'               'npm view npm@11.21.2 version'
    check https-pip  'Saved|downloaded|already'        'pip download --no-deps -d /tmp/dl six 2>&1 | tail -n 1'
    check https-uv   'six'                  'cd /tmp && uv venv -q /tmp/uvenv && VIRTUAL_ENV=/tmp/uvenv uv pip install -q six && /tmp/uvenv/bin/python -c "import six; print(six.__name__)"'
    check npm-global '/home/computer/\.local/bin/' 'npm install -g --silent --no-fund --no-audit semver >/dev/null && command -v semver'
    check pip-user   '/home/computer/\.local/' 'pip install -q --no-warn-script-location six 2>&1 | grep -v "^Defaulting" ; python3 -c "import six; print(six.__file__)"'
fi

# --- Health endpoint --------------------------------------------------------
# Runs the image as the host does (its own entrypoint, a token, the API port
# published on 127.0.0.1) and waits for computerd's unauthenticated health
# probe. Opt-in with CHECK_HEALTH=1.
if [ "${CHECK_HEALTH:-0}" = 1 ]; then
    health=$name-health
    containers+=("$health")
    token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
    docker run -d --name "$health" -e COMPUTERD_TOKEN="$token" \
        -p 127.0.0.1::7070 "$image" >/dev/null
    port=$(docker port "$health" 7070/tcp | head -n 1 | sed 's/.*://')
    deadline=$((SECONDS + 30))
    until out=$(curl -fsS "http://127.0.0.1:$port/health" 2>&1); do
        if [ "$SECONDS" -ge "$deadline" ] \
            || [ "$(docker inspect -f '{{.State.Running}}' "$health")" != true ]; then
            last=$out out=
            break
        fi
        sleep 0.5
    done
    if [ -n "$out" ]; then
        printf 'ok    %-14s %s\n' health "$out"
    else
        failures=$((failures + 1))
        printf 'FAIL  %-14s no answer on 127.0.0.1:%s within 30s (%s); container log:\n' \
            health "$port" "$last"
        docker logs --tail 20 "$health" 2>&1 | sed 's/^/          | /'
    fi
fi
# ---------------------------------------------------------------------------

if [ "$failures" -gt 0 ]; then
    say "$failures check(s) failed for $image"
    exit 1
fi
say "all checks passed for $image"
