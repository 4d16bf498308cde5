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
console.log("js smoke ok");
