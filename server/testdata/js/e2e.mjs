// End-to-end flows through @azure/data-tables against a localtable server
// whose connection string is in LOCALTABLE_CONNECTION_STRING. One line per
// step on stdout; the first failed assertion ends the script with status 1
// and a message saying what was expected and what the SDK surfaced.
import {
  AzureNamedKeyCredential,
  AzureSASCredential,
  RestError,
  TableClient,
  TableServiceClient,
  generateTableSas,
  odata,
} from "@azure/data-tables";

const cs = process.env.LOCALTABLE_CONNECTION_STRING;
if (!cs) {
  console.error("FAIL: LOCALTABLE_CONNECTION_STRING is not set");
  process.exit(2);
}
const opts = { allowInsecureConnection: true };
const csParts = Object.fromEntries(
  cs
    .split(";")
    .filter((kv) => kv.includes("="))
    .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
);
const endpoint = csParts.TableEndpoint;
const credential = new AzureNamedKeyCredential(csParts.AccountName, csParts.AccountKey);

class AssertionFailed extends Error {}

function check(cond, what) {
  if (!cond) throw new AssertionFailed(what);
}

function show(v) {
  return JSON.stringify(v, (_, x) =>
    typeof x === "bigint" ? `${x}n` : x instanceof Uint8Array ? `Uint8Array[${[...x]}]` : x,
  );
}

function checkEqual(got, want, what) {
  check(show(got) === show(want), `${what}: got ${show(got)}, want ${show(want)}`);
}

// expectRestError runs fn, which must fail with a RestError of the given
// HTTP status and error code; it returns the error.
async function expectRestError(what, status, code, fn) {
  let err;
  try {
    await fn();
  } catch (e) {
    err = e;
  }
  check(err !== undefined, `${what}: succeeded, want RestError ${status} ${code}`);
  check(err instanceof RestError, `${what}: threw ${err}, want a RestError`);
  const got = errorCode(err);
  check(
    err.statusCode === status && got === code,
    `${what}: RestError statusCode=${err.statusCode} code=${show(got)}, want ${status} ${show(code)} (message: ${err.message})`,
  );
  return err;
}

// errorCode is the service's error code as this SDK surfaces it: in
// RestError.code for a failed transaction; for a single operation
// RestError.code stays unset and the code is in the deserialized
// odata.error body (err.response.parsedBody.odataError.code).
function errorCode(err) {
  return err.code ?? err.response?.parsedBody?.odataError?.code;
}

function step(msg) {
  console.log(`ok   ${msg}`);
}

const tableName = "jse2e";
const svc = TableServiceClient.fromConnectionString(cs, opts);
const client = TableClient.fromConnectionString(cs, tableName, opts);

async function createTable() {
  await svc.createTable(tableName);
  const names = [];
  for await (const t of svc.listTables({ queryOptions: { filter: odata`TableName eq ${tableName}` } })) {
    names.push(t.name);
  }
  checkEqual(names, [tableName], "listTables after createTable");
  step(`create table ${tableName}`);
}

async function everyEdmType() {
  const guid = "0f8fad5b-d9cb-469f-a165-70867728950e";
  const bytes = new Uint8Array([0, 1, 2, 127, 128, 254, 255]);
  const entity = {
    partitionKey: "types",
    rowKey: "all",
    str: "héllo 'quoted' ✓",
    i32: -123456789,
    i64: 9007199254740993n, // beyond Number.MAX_SAFE_INTEGER
    dblFrac: 3.25,
    dblInt: { value: 2, type: "Double" },
    bool: true,
    dtMillis: new Date("2024-02-29T12:34:56.789Z"),
    dtTicks: { value: "2024-02-29T12:34:56.7891234Z", type: "DateTime" },
    guid: { value: guid, type: "Guid" },
    bin: bytes,
  };
  const created = await client.createEntity(entity);
  check(typeof created.etag === "string" && created.etag.startsWith('W/"datetime'), `createEntity etag: ${show(created.etag)}`);

  // With type conversion (the default): JS values.
  const got = await client.getEntity("types", "all");
  checkEqual(got.etag, created.etag, "getEntity etag vs createEntity etag");
  check(got.timestamp !== undefined, "getEntity: no timestamp");
  checkEqual([typeof got.str, got.str], ["string", entity.str], "String");
  checkEqual([typeof got.i32, got.i32], ["number", -123456789], "Int32");
  checkEqual([typeof got.i64, got.i64], ["bigint", 9007199254740993n], "Int64");
  checkEqual([typeof got.dblFrac, got.dblFrac], ["number", 3.25], "Double (fractional)");
  // JS has one number type: an integral Double surfaces as a plain number.
  checkEqual([typeof got.dblInt, got.dblInt], ["number", 2], "Double (integral)");
  checkEqual([typeof got.bool, got.bool], ["boolean", true], "Boolean");
  check(got.dtMillis instanceof Date, `DateTime (ms): got ${show(got.dtMillis)}, want a Date`);
  checkEqual(got.dtMillis.toISOString(), "2024-02-29T12:34:56.789Z", "DateTime (ms)");
  check(got.dtTicks instanceof Date, `DateTime (100 ns): got ${show(got.dtTicks)}, want a Date`);
  checkEqual(got.dtTicks.toISOString(), "2024-02-29T12:34:56.789Z", "DateTime (100 ns) as a Date");
  checkEqual(got.guid, { value: guid, type: "Guid" }, "Guid");
  check(got.bin instanceof Uint8Array, `Binary: got ${show(got.bin)}, want a Uint8Array`);
  checkEqual([...got.bin], [...bytes], "Binary");
  step("insert and get one entity of every Edm type (converted values)");

  // Without type conversion: the wire value and the Edm type the SDK read.
  const raw = await client.getEntity("types", "all", { disableTypeConversion: true });
  checkEqual(raw.str, { value: entity.str, type: "String" }, "raw String");
  checkEqual(raw.i32, { value: "-123456789", type: "Int32" }, "raw Int32");
  checkEqual(raw.i64, { value: "9007199254740993", type: "Int64" }, "raw Int64");
  checkEqual(raw.dblFrac, { value: "3.25", type: "Double" }, "raw Double (fractional)");
  // The service does not annotate an integral Double, and this SDK infers
  // Int32 for any safe integer it reads (azure-sdk-for-js #19899, #28924):
  // the value survives, the type it reports is the SDK's guess.
  checkEqual(raw.dblInt, { value: "2", type: "Int32" }, "raw Double (integral), as the SDK infers it");
  checkEqual(raw.bool, { value: "true", type: "Boolean" }, "raw Boolean");
  checkEqual(raw.dtMillis, { value: "2024-02-29T12:34:56.789Z", type: "DateTime" }, "raw DateTime (ms)");
  checkEqual(raw.dtTicks, { value: "2024-02-29T12:34:56.7891234Z", type: "DateTime" }, "raw DateTime (100 ns)");
  checkEqual(raw.guid, { value: guid, type: "Guid" }, "raw Guid");
  checkEqual(raw.bin, { value: Buffer.from(bytes).toString("base64"), type: "Binary" }, "raw Binary");
  step("get the same entity without type conversion (Edm types and wire values)");

  // A query returns the same entity, typed the same way.
  const listed = [];
  for await (const e of client.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${"types"} and guid eq guid'${guid}'` } })) {
    listed.push(e);
  }
  checkEqual(listed.length, 1, "query by guid: entity count");
  for (const k of Object.keys(got).filter((k) => k !== "odata.metadata")) {
    checkEqual(listed[0][k], got[k], `query by guid: property ${k}`);
  }
  step("query the entity back with a Guid filter: same values and types");
}

async function pagedQuery() {
  const pk = "it's paged"; // a quote the odata helper must escape
  const total = 2500;
  const rk = (i) => `r${String(i).padStart(5, "0")}`;
  for (let start = 0; start < total; start += 100) {
    const actions = [];
    for (let i = start; i < start + 100; i++) {
      actions.push(["create", { partitionKey: pk, rowKey: rk(i), n: i, tag: i % 2 === 0 ? "even" : "odd" }]);
    }
    await client.submitTransaction(actions);
  }
  // Entities of another partition must not leak into the results.
  await client.createEntity({ partitionKey: "it's paged too", rowKey: rk(0), n: 0, tag: "even" });
  step(`insert ${total} entities in one partition (25 transactions of 100)`);

  const filter = odata`PartitionKey eq ${pk} and n ge ${0} and tag ne ${"it's"}`;
  check(filter === "PartitionKey eq 'it''s paged' and n ge 0 and tag ne 'it''s'", `odata filter: ${filter}`);
  const seen = [];
  const pageSizes = [];
  for await (const page of client.listEntities({ queryOptions: { filter, select: ["RowKey", "n", "tag"] } }).byPage({ maxPageSize: 1000 })) {
    check(page.length <= 1000, `page of ${page.length} entities, want at most 1000`);
    pageSizes.push(page.length);
    for (const e of page) seen.push(e);
  }
  check(pageSizes.length >= 3, `page sizes ${show(pageSizes)}: want at least 3 pages for ${total} entities`);
  checkEqual(seen.length, total, "entities seen across pages");
  for (let i = 0; i < total; i++) {
    const e = seen[i];
    if (e.rowKey !== rk(i) || e.n !== i || e.tag !== (i % 2 === 0 ? "even" : "odd")) {
      check(false, `entity #${i}: got ${show(e)}, want rowKey ${rk(i)} n ${i}`);
    }
  }
  step(`query with an odata-built filter, page size 1000: pages ${show(pageSizes)}, every entity once, in order`);

  // A typed Int32 comparison and a parameterized string narrow it down.
  const some = [];
  for await (const e of client.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${pk} and n ge ${2490} and tag eq ${"odd"}` } })) {
    some.push(e.n);
  }
  checkEqual(some, [2491, 2493, 2495, 2497, 2499], "filter n ge 2490 and tag eq 'odd'");
  step("query with Int32 and String parameters");
}

async function transactionETags() {
  const pk = "tx";
  const a = await client.createEntity({ partitionKey: pk, rowKey: "a", v: 1 });
  await client.createEntity({ partitionKey: pk, rowKey: "b", v: 1 });
  await client.createEntity({ partitionKey: pk, rowKey: "c", v: 1, keep: "yes" });
  const res = await client.submitTransaction([
    ["create", { partitionKey: pk, rowKey: "d", v: 4 }],
    ["create", { partitionKey: pk, rowKey: "e", v: 5 }],
    ["update", { partitionKey: pk, rowKey: "a", v: 10 }, "Replace", { etag: a.etag }],
    ["upsert", { partitionKey: pk, rowKey: "c", v: 30 }, "Merge"],
    ["delete", { partitionKey: pk, rowKey: "b" }],
  ]);
  checkEqual(res.status, 202, "transaction status");
  checkEqual(res.subResponses.map((r) => r.status), [204, 204, 204, 204, 204], "sub-response statuses");
  const written = ["d", "e", "a", "c"];
  for (let i = 0; i < written.length; i++) {
    const sub = res.subResponses[i];
    check(
      typeof sub.etag === "string" && sub.etag.length > 0,
      `sub-response ${i} (${written[i]}) has no ETag the SDK could read (it matches a case-sensitive "ETag: " header): ${show(sub)}`,
    );
    const e = await client.getEntity(pk, written[i]);
    checkEqual(sub.etag, e.etag, `sub-response ${i} ETag vs getEntity("${written[i]}").etag`);
  }
  checkEqual(res.getResponseForEntity("d")?.status, 204, "getResponseForEntity(d)");
  const c = await client.getEntity(pk, "c");
  checkEqual([c.v, c.keep], [30, "yes"], "merged entity c");
  await expectRestError("get deleted entity b", 404, "ResourceNotFound", () => client.getEntity(pk, "b"));
  step("transaction of 5 (2 creates, replace with ETag, merge upsert, delete): sub-response ETags match the entities");
}

async function failingTransaction() {
  const pk = "tx";
  const before = await client.getEntity(pk, "a");
  const err = await expectRestError("transaction with a duplicate insert at index 2", 409, "EntityAlreadyExists", () =>
    client.submitTransaction([
      ["create", { partitionKey: pk, rowKey: "f", v: 6 }],
      ["update", { partitionKey: pk, rowKey: "a", v: 99 }, "Merge"],
      ["create", { partitionKey: pk, rowKey: "d", v: 44 }],
      ["delete", { partitionKey: pk, rowKey: "e" }],
    ]),
  );
  check(err.message.startsWith("2:"), `failing index: message ${show(err.message)}, want it to start with "2:"`);
  await expectRestError("entity f of the failed transaction", 404, "ResourceNotFound", () => client.getEntity(pk, "f"));
  const after = await client.getEntity(pk, "a");
  checkEqual([after.v, after.etag], [before.v, before.etag], "entity a after the failed transaction");
  const d = await client.getEntity(pk, "d");
  checkEqual(d.v, 4, "entity d after the failed transaction");
  await client.getEntity(pk, "e"); // still there
  step("failing transaction: 409 EntityAlreadyExists at index 2, nothing applied");
}

async function sasReadOnly() {
  const sas = generateTableSas(tableName, credential, {
    permissions: { query: true },
    expiresOn: new Date(Date.now() + 3600 * 1000),
  });
  const fields = new URLSearchParams(sas);
  check(fields.get("sp") === "r" && fields.get("tn") === tableName, `SAS token ${sas}: want sp=r and tn=${tableName}`);
  const ro = new TableClient(endpoint, tableName, new AzureSASCredential(sas), opts);
  const e = await ro.getEntity("tx", "a");
  checkEqual(e.v, 10, "SAS getEntity");
  let n = 0;
  for await (const _ of ro.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${"tx"}` } })) n++;
  checkEqual(n, 4, "SAS listEntities count in partition tx");
  await expectRestError("SAS createEntity", 403, "AuthorizationPermissionMismatch", () =>
    ro.createEntity({ partitionKey: "tx", rowKey: "sas", v: 1 }),
  );
  await expectRestError("SAS updateEntity", 403, "AuthorizationPermissionMismatch", () =>
    ro.updateEntity({ partitionKey: "tx", rowKey: "a", v: 1 }, "Merge"),
  );
  await expectRestError("SAS deleteEntity", 403, "AuthorizationPermissionMismatch", () => ro.deleteEntity("tx", "a"));
  await expectRestError("createEntity after the failed SAS writes", 409, "EntityAlreadyExists", () =>
    client.createEntity({ partitionKey: "tx", rowKey: "a" }),
  );
  const again = await client.getEntity("tx", "a");
  checkEqual(again.v, 10, "entity a after the rejected SAS writes");
  step("SAS from generateTableSas (sp=r): reads work, writes fail 403 AuthorizationPermissionMismatch");
}

async function staleETag() {
  const first = await client.getEntity("tx", "c");
  const upd = await client.updateEntity({ partitionKey: "tx", rowKey: "c", v: 31 }, "Merge", { etag: first.etag });
  check(upd.etag && upd.etag !== first.etag, `updateEntity etag ${show(upd.etag)}: want a new one (old ${first.etag})`);
  await expectRestError("updateEntity with a stale ETag", 412, "UpdateConditionNotSatisfied", () =>
    client.updateEntity({ partitionKey: "tx", rowKey: "c", v: 32 }, "Replace", { etag: first.etag }),
  );
  await expectRestError("deleteEntity with a stale ETag", 412, "UpdateConditionNotSatisfied", () =>
    client.deleteEntity("tx", "c", { etag: first.etag }),
  );
  const now = await client.getEntity("tx", "c");
  checkEqual([now.v, now.etag], [31, upd.etag], "entity c after the stale writes");
  step("update and delete with a stale ETag: 412 UpdateConditionNotSatisfied");
}

async function deleteTable() {
  await svc.deleteTable(tableName);
  const names = [];
  for await (const t of svc.listTables()) names.push(t.name);
  check(!names.includes(tableName), `listTables after deleteTable: ${show(names)}`);
  await expectRestError("getEntity after deleteTable", 404, "TableNotFound", () => client.getEntity("tx", "a"));
  step(`delete table ${tableName}`);
}

try {
  await createTable();
  await everyEdmType();
  await pagedQuery();
  await transactionETags();
  await failingTransaction();
  await sasReadOnly();
  await staleETag();
  await deleteTable();
  console.log("js e2e ok");
} catch (e) {
  if (e instanceof AssertionFailed) {
    console.error(`FAIL ${e.message}`);
  } else {
    console.error(`FAIL unexpected error: ${e?.stack ?? e}`);
    if (e instanceof RestError) {
      console.error(`     statusCode=${e.statusCode} code=${e.code} request=${e.request?.method} ${e.request?.url}`);
    }
  }
  process.exit(1);
}
