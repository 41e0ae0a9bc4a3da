# shellcheck shell=sh
# Installed as /etc/profile.d/computer-use.sh. Login shells start from the
# PATH that /etc/profile sets, so put ~/.local/bin (where `pip install` and
# `npm install -g` go) back in front of it.
case ":$PATH:" in
*":$HOME/.local/bin:"*) ;;
*) PATH="$HOME/.local/bin:$PATH" ;;
esac
export PATH
