// Joins a host, counts ticks for a few seconds, says hello in the chat and leaves.
// Usage: node examples/count-ticks.mjs tcp://127.0.0.1:30502 [NAME] [SECONDS]
//        node examples/count-ticks.mjs ws://127.0.0.1:8080/ws [NAME] [SECONDS]
import { join, RefusedError } from "@lockhost/client";

const [url = "tcp://127.0.0.1:30502", name = "Counter", seconds = "3"] = process.argv.slice(2);
try {
  const s = await join(url, { name });
  console.log(`joined ${s.gameName} at tick ${s.tick}: ${s.world.length} bytes of world, players ${s.players.map((p) => p.name).join(", ")}`);
  let ticks = 0, commands = 0;
  s.on("tick", (tick, cmds) => ((ticks += 1), (commands += cmds.length)));
  await new Promise((r) => setTimeout(r, Number(seconds) * 1000));
  const [counted, applied] = [ticks, commands]; // ticks go on arriving while the chat is sent
  await s.chat(`hello from ${name}: ${counted} ticks, ${applied} commands`);
  console.log(`${counted} ticks (now at ${s.tick}), ${applied} commands; said hello`);
  await s.leave();
} catch (e) {
  console.error(e instanceof RefusedError ? `refused (${e.reasonName}): ${e.hostMessage}` : String(e));
  process.exit(e instanceof RefusedError ? 3 : 4);
}
