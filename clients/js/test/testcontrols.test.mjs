// Tests of the test controls as a JS suite uses them: node --test, with
// @azure/data-tables for the data and ../testcontrols.mjs for the controls,
// against a server started with `localtable serve --test-controls`, whose
// connection string is in LOCALTABLE_CONNECTION_STRING.
import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { AzureNamedKeyCredential, AzureSASCredential, TableClient, generateTableSas } from "@azure/data-tables";
import { TestControls } from "../testcontrols.mjs";

const cs = process.env.LOCALTABLE_CONNECTION_STRING;
assert.ok(cs, "LOCALTABLE_CONNECTION_STRING is not set");
const ctl = TestControls.fromConnectionString(cs);
const parts = Object.fromEntries(cs.split(";").filter(Boolean).map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)]));
// Retries as the SDK's default policy makes them, but without the waits.
const opts = { allowInsecureConnection: true, retryOptions: { retryDelayInMs: 1, maxRetryDelayInMs: 5 } };
const tableName = "jsctl";
const client = TableClient.fromConnectionString(cs, tableName, opts);

// errorCode is the service's error code of a RestError: for a single
// operation the SDK leaves err.code unset and the code is in the
// deserialized odata.error body.
const errorCode = (err) => err.code ?? err.response?.parsedBody?.odataError?.code;

// Reset between tests: every test starts from an empty account, no fault
// rules, the real time and an empty log.
beforeEach(async () => {
  await ctl.reset();
  await ctl.clearFaults();
  await ctl.clearLatency();
  await ctl.setClock({ freeze: false, set: new Date().toISOString() });
  await client.createTable();
  await ctl.clearLog();
});

test("two ServerBusy then success: the SDK's retries get the insert through", async () => {
  const rule = await ctl.addFault({ operations: ["InsertEntity"], table: tableName, times: 2, action: { type: "serverBusy" } });
  await client.createEntity({ partitionKey: "p", rowKey: "1", v: 1 });
  const [fault] = await ctl.faults();
  assert.equal(fault.id, rule.id);
  assert.equal(fault.hits, 2);
  const log = await ctl.log();
  assert.deepEqual(
    log.map((r) => `${r.operation} ${r.status} ${r.errorCode ?? ""}`.trim()),
    // The SDK asks for no content back (Prefer: return-no-content): 204.
    ["InsertEntity 503 ServerBusy", "InsertEntity 503 ServerBusy", "InsertEntity 204"],
  );
  assert.equal((await client.getEntity("p", "1")).v, 1);
});

test("advance the clock past a SAS expiry: the SAS call then fails AuthenticationFailed", async () => {
  await client.createEntity({ partitionKey: "p", rowKey: "1", v: 1 });
  const credential = new AzureNamedKeyCredential(parts.AccountName, parts.AccountKey);
  const sas = generateTableSas(tableName, credential, {
    permissions: { query: true },
    expiresOn: new Date(Date.now() + 5 * 60 * 1000),
  });
  const ro = new TableClient(parts.TableEndpoint, tableName, new AzureSASCredential(sas), opts);
  assert.equal((await ro.getEntity("p", "1")).v, 1);
  await ctl.advanceClock("10m");
  await assert.rejects(ro.getEntity("p", "1"), (err) => {
    assert.equal(err.statusCode, 403);
    assert.equal(errorCode(err), "AuthenticationFailed");
    return true;
  });
  // Shared Key clients date requests by the real clock: they still work.
  assert.equal((await client.getEntity("p", "1")).v, 1);
});

test("reset between tests, part 1: write an entity", async () => {
  await client.createEntity({ partitionKey: "p", rowKey: "left-behind" });
});

test("reset between tests, part 2: the entity of part 1 is gone", async () => {
  const rows = [];
  for await (const e of client.listEntities()) rows.push(e.rowKey);
  assert.deepEqual(rows, []);
});

test("snapshot and restore", async () => {
  await client.createEntity({ partitionKey: "p", rowKey: "fixture" });
  await ctl.snapshot("fixture");
  await client.createEntity({ partitionKey: "p", rowKey: "extra" });
  await ctl.restore("fixture");
  const rows = [];
  for await (const e of client.listEntities()) rows.push(e.rowKey);
  assert.deepEqual(rows, ["fixture"]);
});

test("a frozen clock stamps entities with the time it was set to", async () => {
  const at = new Date(Math.floor(Date.now() / 1000) * 1000 + 365 * 86400 * 1000).toISOString();
  const clock = await ctl.setClock({ freeze: true, set: at });
  assert.equal(clock.frozen, true);
  await client.createEntity({ partitionKey: "p", rowKey: "t" });
  const e = await client.getEntity("p", "t");
  // At the frozen time, or a tick after if the account stamped that time
  // before (an earlier run): its Timestamps only ever increase.
  const ms = new Date(e.timestamp).getTime() - new Date(at).getTime();
  assert.ok(ms >= 0 && ms < 1, `Timestamp ${e.timestamp}, want ${at}`);
});

test("the server's endpoint without the account's path serves too", async () => {
  const server = new URL(parts.TableEndpoint);
  server.pathname = "/";
  const bare = new TestControls(server.href, parts.AccountName, parts.AccountKey);
  await client.createEntity({ partitionKey: "p", rowKey: "bare" });
  await bare.reset();
  await assert.rejects(client.getEntity("p", "bare"), (err) => err.statusCode === 404);
});
