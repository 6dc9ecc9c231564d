// Drives `opencode serve` for the hook walk: one session, one prompt, then
// waits until the session has been idle for a while (Orcho's plugin answers
// an unproven stop with a new prompt, which starts another turn), and
// prints each message's text and tool calls.
//
// node driver.mjs BASE_URL PROMPT   (OPENCODE_SDK: the SDK's entry file)
const [baseUrl, prompt] = process.argv.slice(2);
const { createOpencodeClient } = await import(process.env.OPENCODE_SDK);
const client = createOpencodeClient({ baseUrl });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const say = (what) => console.error(`${new Date().toISOString()} ${what}`);

for (let i = 0; ; i++) {
  try {
    const listed = await client.session.list();
    if (listed.error === undefined && listed.response?.ok !== false) break;
    say(`not ready: ${JSON.stringify(listed.error)}`);
  } catch (e) {
    if (i > 300) throw new Error(`opencode serve did not answer: ${e}`);
    await sleep(100);
  }
}
say("ready");
const session = await client.session.create({ body: { title: "orcho hook walk" } });
const id = session.data.id;
say(`session ${id}`);
await client.session.prompt({ path: { id }, body: { parts: [{ type: "text", text: prompt }] } });

say("prompted");
// Settled: the same number of messages, the last one finished, for 3 s.
let last = -1;
let stableSince = Date.now();
const deadline = Date.now() + 120_000;
let messages = [];
while (Date.now() < deadline) {
  messages = (await client.session.messages({ path: { id } })).data ?? [];
  const status = (await client.session.status?.())?.data?.[id]?.type ?? "idle";
  if (messages.length !== last || status !== "idle") {
    last = messages.length;
    stableSince = Date.now();
  } else if (Date.now() - stableSince > 3000) {
    break;
  }
  await sleep(250);
}
for (const m of messages) {
  const parts = m.parts.map((p) =>
    p.type === "text"
      ? `text: ${p.text}`
      : p.type === "tool"
        ? `tool ${p.tool} ${p.state.status}: ${JSON.stringify(p.state.input)} ${p.state.status === "error" ? p.state.error : ""}`
        : p.type,
  );
  console.log(`${m.info.role}: ${parts.join(" | ")}`);
}
process.exit(0);
