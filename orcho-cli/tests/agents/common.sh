# What every real-agent driver does first, sourced by each: loopback up in
# a private network namespace, the scripted model server started (its port
# in $port), and `codex_config DIR` to point Codex at it.
set -u
if [ "${PRIVATE_NET:-0}" = 1 ]; then ip link set lo up; fi
"$PYTHON" "$SERVER" --log "$CTL/requests.jsonl" --port-file "$CTL/port" 2>"$CTL/server.err" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 1 200); do [ -s "$CTL/port" ] && break; sleep 0.05; done
if [ ! -s "$CTL/port" ]; then echo "the model server did not start" >"$CTL/driver.err"; exit 1; fi
port=$(cat "$CTL/port")

# Codex's configuration in DIR: the scripted provider, nothing else asked.
codex_config() {
  mkdir -p "$1"
  cat >"$1/config.toml" <<TOML
model = "gpt-5.5"
model_provider = "scripted"
check_for_update_on_startup = false

[model_providers.scripted]
name = "scripted"
base_url = "http://127.0.0.1:$port/v1"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[features]
plugins = false
TOML
}

# opencode's configuration in DIR: the scripted provider and model, its
# tools allowed (Orcho's plugin answers each call), no update, no sharing;
# and its plugin package.
opencode_config() {
  mkdir -p "$1"
  cat >"$1/opencode.json" <<JSON
{"provider":{"scripted":{"npm":"@ai-sdk/openai-compatible","name":"scripted",
  "options":{"baseURL":"http://127.0.0.1:$port/v1","apiKey":"scripted"},
  "models":{"scripted":{"name":"scripted","tool_call":true}}}},
 "model":"scripted/scripted","small_model":"scripted/scripted",
 "autoupdate":false,"share":"disabled","permission":{"bash":"allow","edit":"allow"}}
JSON
  opencode_deps "$1"
}

# opencode installs its plugin package into a configuration directory DIR
# when it starts; offline, that would wait for the registry: the package is
# linked there from $OPENCODE_DEPS.
opencode_deps() {
  mkdir -p "$1"
  cp "$OPENCODE_DEPS/package.json" "$OPENCODE_DEPS/package-lock.json" "$1"/
  ln -sfn "$OPENCODE_DEPS/node_modules" "$1/node_modules"
}
