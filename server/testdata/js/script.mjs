// Smoke test: @azure/data-tables against a localtable server whose
// connection string is in LOCALTABLE_CONNECTION_STRING.
import { TableClient, TableServiceClient } from "@azure/data-tables";

const cs = process.env.LOCALTABLE_CONNECTION_STRING;
const opts = { allowInsecureConnection: true };
const svc = TableServiceClient.fromConnectionString(cs, opts);
await svc.createTable("jssmoke");
const t = TableClient.fromConnectionString(cs, "jssmoke", opts);
await t.upsertEntity({ partitionKey: "p", rowKey: "1", name: "one", n: 1, big: { value: "12345678901", type: "Int64" } });
const got = await t.getEntity("p", "1");
if (got.name !== "one" || got.n !== 1) throw new Error("get: " + JSON.stringify(got));
await t.submitTransaction([
  ["create", { partitionKey: "p", rowKey: "2", name: "two" }],
  ["upsert", { partitionKey: "p", rowKey: "3", name: "three" }, "Merge"],
  ["delete", { partitionKey: "p", rowKey: "1" }],
]);
const names = [];
for await (const e of t.listEntities({ queryOptions: { filter: "PartitionKey eq 'p'" } })) names.push(e.name);
if (names.join(",") !== "two,three") throw new Error("query: " + names);
let tables = 0;
for await (const _ of svc.listTables()) tables++;
if (tables !== 1) throw new Error("tables: " + tables);
// Each transaction sub-response carries its entity's new ETag (the SDK
// reads "ETag: " case-sensitively), the one a later get returns.
await t.createEntity({ partitionKey: "e", rowKey: "2", n: 0 });
const tx = await t.submitTransaction([
  ["create", { partitionKey: "e", rowKey: "1", n: 1 }],
  ["update", { partitionKey: "e", rowKey: "2", n: 2 }, "Merge"],
  ["upsert", { partitionKey: "e", rowKey: "3", n: 3 }, "Replace"],
]);
if (tx.status !== 202 || tx.subResponses.length !== 3) throw new Error("transaction: " + JSON.stringify(tx));
for (const [i, rk] of ["1", "2", "3"].entries()) {
  const sub = tx.subResponses[i];
  const e = await t.getEntity("e", rk);
  if (!sub.etag || sub.etag !== e.etag || sub.status !== 204) {
    throw new Error(`sub-response ${i}: ${JSON.stringify(sub)}, get has etag ${e.etag}`);
  }
}
if (tx.getResponseForEntity("1")?.etag !== tx.subResponses[0].etag) throw new Error("getResponseForEntity: " + JSON.stringify(tx.subResponses));
// A failed transaction reports the failing operation's index and code.
try {
  await t.submitTransaction([
    ["create", { partitionKey: "e", rowKey: "9" }],
    ["create", { partitionKey: "e", rowKey: "1" }],
  ]);
  throw new Error("a transaction creating an existing entity succeeded");
} catch (err) {
  if (err.code !== "EntityAlreadyExists" || err.statusCode !== 409 || !err.message.startsWith("1:The specified entity already exists.\nRequestId:")) throw err;
}
console.log("js smoke ok");
