"""End-to-end flows through azure-data-tables against a localtable server.

The connection string is in LOCALTABLE_CONNECTION_STRING. One line per
step on stdout; the first failed assertion ends the script with status 1
and a message saying what was expected and what the SDK surfaced.
"""

import datetime
import os
import sys
import uuid

from azure.core import MatchConditions
from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.core.exceptions import HttpResponseError, ResourceModifiedError, ResourceNotFoundError
from azure.data.tables import (
    EdmType,
    EntityProperty,
    TableClient,
    TableSasPermissions,
    TableServiceClient,
    TableTransactionError,
    UpdateMode,
    generate_table_sas,
)
from azure.data.tables import __version__ as tables_version

UTC = datetime.timezone.utc


class AssertionFailed(Exception):
    """A check of what the SDK surfaced failed."""


def check(cond, what):
    if not cond:
        raise AssertionFailed(what)


def check_equal(got, want, what):
    """got must equal want and be of its type (or, for a datetime, a subclass: the SDK's TablesEntityDatetime)."""
    same_type = isinstance(got, datetime.datetime) if isinstance(want, datetime.datetime) else type(got) is type(want)
    check(got == want and same_type, f"{what}: got {got!r} ({type(got).__name__}), want {want!r} ({type(want).__name__})")


def body_error_code(e):
    """The odata.error code of the response an HttpResponseError carries."""
    try:
        return e.response.json()["odata.error"]["code"]
    except Exception:  # noqa: BLE001 - no JSON error body: no code
        return None


def expect_error(what, exc_type, status, code, fn, undecoded=False):
    """Runs fn, which must raise exc_type with the HTTP status and error code; returns the error.

    The SDK decodes the service's error code into error_code, except where
    undecoded says it re-raises the pipeline's error as it is (create_entity
    in 12.4.2): there the code is read from the response the error carries.
    """
    try:
        fn()
    except exc_type as e:
        got_code = body_error_code(e) if undecoded else getattr(e, "error_code", None)
        check(
            e.status_code == status and got_code == code,
            f"{what}: {type(e).__name__} status_code={e.status_code} error_code={got_code!r}, want {status} {code!r} (message: {e.message!r})",
        )
        return e
    except Exception as e:  # noqa: BLE001 - any other error is a failed check
        raise AssertionFailed(f"{what}: raised {type(e).__name__}: {e}, want {exc_type.__name__} {status} {code}") from e
    raise AssertionFailed(f"{what}: succeeded, want {exc_type.__name__} {status} {code}")


def step(msg):
    print(f"ok   {msg}", flush=True)


CS = os.environ.get("LOCALTABLE_CONNECTION_STRING")
if not CS:
    print("FAIL: LOCALTABLE_CONNECTION_STRING is not set", file=sys.stderr)
    sys.exit(2)
PARTS = dict(kv.split("=", 1) for kv in CS.split(";") if "=" in kv)
ENDPOINT = PARTS["TableEndpoint"]
CREDENTIAL = AzureNamedKeyCredential(PARTS["AccountName"], PARTS["AccountKey"])
TABLE = "pye2e"

svc = TableServiceClient.from_connection_string(CS)
client = TableClient.from_connection_string(CS, TABLE)


def create_table():
    svc.create_table(TABLE)
    names = [t.name for t in svc.query_tables("TableName eq @name", parameters={"name": TABLE})]
    check_equal(names, [TABLE], "query_tables after create_table")
    step(f"create table {TABLE} (azure-data-tables {tables_version})")


def every_edm_type():
    guid = uuid.UUID("0f8fad5b-d9cb-469f-a165-70867728950e")
    data = bytes([0, 1, 2, 127, 128, 254, 255])
    micros = datetime.datetime(2024, 2, 29, 12, 34, 56, 789123, tzinfo=UTC)
    entity = {
        "PartitionKey": "types",
        "RowKey": "all",
        "str": "héllo 'quoted' ✓",
        "i32": -123456789,
        "i64": EntityProperty(2**53 + 1, EdmType.INT64),
        "dblFrac": 3.25,
        "dblInt": 2.0,
        "bool": True,
        "dtMicros": micros,
        "dtTicks": EntityProperty("2024-02-29T12:34:56.7891234Z", EdmType.DATETIME),
        "guid": guid,
        "bin": data,
    }
    created = client.create_entity(entity)
    etag = created.get("etag")
    check(isinstance(etag, str) and etag.startswith('W/"datetime'), f"create_entity etag: {etag!r}")

    got = client.get_entity("types", "all")
    check_equal(got.metadata.get("etag"), etag, "get_entity etag vs create_entity etag")
    check(isinstance(got.metadata.get("timestamp"), datetime.datetime), f"get_entity timestamp: {got.metadata.get('timestamp')!r}")
    check_equal(got["str"], entity["str"], "String")
    check_equal(got["i32"], -123456789, "Int32")
    check_equal(got["i64"], EntityProperty(2**53 + 1, EdmType.INT64), "Int64")
    check_equal(got["dblFrac"], 3.25, "Double (fractional)")
    check_equal(got["dblInt"], 2.0, "Double (integral): a float, not an int")
    check_equal(got["bool"], True, "Boolean")
    check(isinstance(got["dtMicros"], datetime.datetime), f"DateTime (µs): got {got['dtMicros']!r}, want a datetime")
    check_equal(got["dtMicros"], micros, "DateTime (µs)")
    check_equal(got["dtMicros"].tables_service_value, "2024-02-29T12:34:56.789123Z", "DateTime (µs) as the service sent it")
    check_equal(got["dtTicks"], micros, "DateTime (100 ns), truncated by the SDK to µs")
    check_equal(got["dtTicks"].tables_service_value, "2024-02-29T12:34:56.7891234Z", "DateTime (100 ns) as the service sent it")
    check_equal(got["guid"], guid, "Guid")
    check_equal(got["bin"], data, "Binary")
    step("insert and get one entity of every Edm type: values and Python types")

    # A query returns the same entity, typed the same way.
    listed = list(client.query_entities("PartitionKey eq @pk and guid eq @guid", parameters={"pk": "types", "guid": guid}))
    check_equal(len(listed), 1, "query by guid: entity count")
    for k in got:
        check_equal(listed[0][k], got[k], f"query by guid: property {k}")
    check_equal(listed[0].metadata.get("etag"), etag, "query by guid: etag")

    # Typed parameters of every kind bind to filters that match the entity.
    for name, value in [
        ("i32", -123456789),
        ("i64", 2**53 + 1),
        ("dblFrac", 3.25),
        ("bool", True),
        ("dtMicros", micros),
        ("bin", data),
        ("str", "héllo 'quoted' ✓"),
    ]:
        rows = list(client.query_entities(f"PartitionKey eq @pk and {name} eq @v", parameters={"pk": "types", "v": value}))
        check_equal(len(rows), 1, f"filter {name} eq {value!r}: entity count")
    step("query the entity back with parameters= filters of every type: same values and types")


def paged_query():
    pk = "it's paged"  # a quote the parameter binding must escape
    total = 2500

    def rk(i):
        return f"r{i:05d}"

    for start in range(0, total, 100):
        ops = [
            ("create", {"PartitionKey": pk, "RowKey": rk(i), "n": i, "tag": "even" if i % 2 == 0 else "odd"})
            for i in range(start, start + 100)
        ]
        client.submit_transaction(ops)
    # Entities of another partition must not leak into the results.
    client.create_entity({"PartitionKey": pk + " too", "RowKey": rk(0), "n": 0, "tag": "even"})
    step(f"insert {total} entities in one partition (25 transactions of 100)")

    pages = client.query_entities(
        "PartitionKey eq @pk and n ge @lo and tag ne @tag",
        parameters={"pk": pk, "lo": 0, "tag": "it's"},
        results_per_page=1000,
        select=["RowKey", "n", "tag"],
    ).by_page()
    seen, sizes = [], []
    for page in pages:
        items = list(page)
        check(len(items) <= 1000, f"page of {len(items)} entities, want at most 1000")
        sizes.append(len(items))
        seen.extend(items)
    check(len(sizes) >= 3, f"page sizes {sizes}: want at least 3 pages for {total} entities")
    check_equal(len(seen), total, "entities seen across pages")
    for i, e in enumerate(seen):
        want_tag = "even" if i % 2 == 0 else "odd"
        if e.get("RowKey") != rk(i) or e.get("n") != i or e.get("tag") != want_tag:
            raise AssertionFailed(f"entity #{i}: got {dict(e)!r}, want RowKey {rk(i)} n {i} tag {want_tag}")
    step(f"query with parameters=, results_per_page=1000: pages {sizes}, every entity once, in order")

    some = [e["n"] for e in client.query_entities("PartitionKey eq @pk and n ge @lo and tag eq @tag", parameters={"pk": pk, "lo": 2490, "tag": "odd"})]
    check_equal(some, [2491, 2493, 2495, 2497, 2499], "filter n ge 2490 and tag eq 'odd'")
    step("query with Int32 and String parameters")


def transaction_etags():
    pk = "tx"
    a = client.create_entity({"PartitionKey": pk, "RowKey": "a", "v": 1})
    client.create_entity({"PartitionKey": pk, "RowKey": "b", "v": 1})
    client.create_entity({"PartitionKey": pk, "RowKey": "c", "v": 1, "keep": "yes"})
    result = client.submit_transaction(
        [
            ("create", {"PartitionKey": pk, "RowKey": "d", "v": 4}),
            ("create", {"PartitionKey": pk, "RowKey": "e", "v": 5}),
            ("update", {"PartitionKey": pk, "RowKey": "a", "v": 10}, {"mode": UpdateMode.REPLACE, "etag": a["etag"], "match_condition": MatchConditions.IfNotModified}),
            ("upsert", {"PartitionKey": pk, "RowKey": "c", "v": 30}, {"mode": UpdateMode.MERGE}),
            ("delete", {"PartitionKey": pk, "RowKey": "b"}),
        ]
    )
    check_equal(len(result), 5, "transaction result count")
    for i, rk in enumerate(["d", "e", "a", "c"]):
        sub = result[i].get("etag")
        check(isinstance(sub, str) and sub, f"sub-response {i} ({rk}): no etag in {result[i]!r}")
        check_equal(sub, client.get_entity(pk, rk).metadata["etag"], f"sub-response {i} etag vs get_entity({rk!r})")
    check_equal(result[4].get("etag"), None, "sub-response 4 (delete) etag")
    c = client.get_entity(pk, "c")
    check_equal((c["v"], c["keep"]), (30, "yes"), "merged entity c")
    expect_error("get deleted entity b", ResourceNotFoundError, 404, "ResourceNotFound", lambda: client.get_entity(pk, "b"))
    step("transaction of 5 (2 creates, replace with etag, merge upsert, delete): sub-response etags match the entities")


def failing_transaction():
    pk = "tx"
    before = client.get_entity(pk, "a")
    err = expect_error(
        "transaction with a duplicate insert at index 2",
        TableTransactionError,
        409,
        "EntityAlreadyExists",
        lambda: client.submit_transaction(
            [
                ("create", {"PartitionKey": pk, "RowKey": "f", "v": 6}),
                ("update", {"PartitionKey": pk, "RowKey": "a", "v": 99}),
                ("create", {"PartitionKey": pk, "RowKey": "d", "v": 44}),
                ("delete", {"PartitionKey": pk, "RowKey": "e"}),
            ]
        ),
    )
    check_equal(err.index, 2, "TableTransactionError.index")
    expect_error("entity f of the failed transaction", ResourceNotFoundError, 404, "ResourceNotFound", lambda: client.get_entity(pk, "f"))
    after = client.get_entity(pk, "a")
    check_equal((after["v"], after.metadata["etag"]), (before["v"], before.metadata["etag"]), "entity a after the failed transaction")
    check_equal(client.get_entity(pk, "d")["v"], 4, "entity d after the failed transaction")
    client.get_entity(pk, "e")  # still there
    step("failing transaction: 409 EntityAlreadyExists at index 2, nothing applied")


def sas_read_only():
    sas = generate_table_sas(
        CREDENTIAL,
        TABLE,
        permission=TableSasPermissions(read=True),
        expiry=datetime.datetime.now(UTC) + datetime.timedelta(hours=1),
    )
    fields = dict(kv.split("=", 1) for kv in sas.split("&"))
    check(fields.get("sp") == "r" and fields.get("tn") == TABLE, f"SAS token {sas}: want sp=r and tn={TABLE}")
    ro = TableClient(ENDPOINT, TABLE, credential=AzureSasCredential(sas))
    check_equal(ro.get_entity("tx", "a")["v"], 10, "SAS get_entity")
    check_equal(len(list(ro.query_entities("PartitionKey eq @pk", parameters={"pk": "tx"}))), 4, "SAS query_entities count in partition tx")
    code = "AuthorizationPermissionMismatch"
    expect_error(
        "SAS create_entity", HttpResponseError, 403, code, lambda: ro.create_entity({"PartitionKey": "tx", "RowKey": "sas", "v": 1}), undecoded=True
    )
    expect_error("SAS update_entity", HttpResponseError, 403, code, lambda: ro.update_entity({"PartitionKey": "tx", "RowKey": "a", "v": 1}))
    expect_error("SAS upsert_entity", HttpResponseError, 403, code, lambda: ro.upsert_entity({"PartitionKey": "tx", "RowKey": "a", "v": 1}))
    expect_error("SAS delete_entity", HttpResponseError, 403, code, lambda: ro.delete_entity("tx", "a"))
    # Whether the service refuses the whole batch (403) or the change set
    # inside a 202 (TableTransactionError, a subclass), the SDK raises an
    # HttpResponseError with the code.
    expect_error(
        "SAS transaction", HttpResponseError, 403, code, lambda: ro.submit_transaction([("create", {"PartitionKey": "tx", "RowKey": "sas"})])
    )
    check_equal(client.get_entity("tx", "a")["v"], 10, "entity a after the rejected SAS writes")
    expect_error("entity sas after the rejected SAS writes", ResourceNotFoundError, 404, "ResourceNotFound", lambda: client.get_entity("tx", "sas"))
    step("SAS from generate_table_sas (sp=r): reads work, writes fail 403 AuthorizationPermissionMismatch")


def stale_etag():
    first = client.get_entity("tx", "c")
    upd = client.update_entity({"PartitionKey": "tx", "RowKey": "c", "v": 31}, mode=UpdateMode.MERGE, etag=first.metadata["etag"], match_condition=MatchConditions.IfNotModified)
    check(upd.get("etag") and upd["etag"] != first.metadata["etag"], f"update_entity etag {upd.get('etag')!r}: want a new one")
    expect_error(
        "update_entity with a stale etag",
        ResourceModifiedError,
        412,
        "UpdateConditionNotSatisfied",
        lambda: client.update_entity(
            {"PartitionKey": "tx", "RowKey": "c", "v": 32}, mode=UpdateMode.REPLACE, etag=first.metadata["etag"], match_condition=MatchConditions.IfNotModified
        ),
    )
    expect_error(
        "delete_entity with a stale etag",
        ResourceModifiedError,
        412,
        "UpdateConditionNotSatisfied",
        lambda: client.delete_entity("tx", "c", etag=first.metadata["etag"], match_condition=MatchConditions.IfNotModified),
    )
    now = client.get_entity("tx", "c")
    check_equal((now["v"], now.metadata["etag"]), (31, upd["etag"]), "entity c after the stale writes")
    step("update and delete with a stale etag: 412 UpdateConditionNotSatisfied as ResourceModifiedError")


def secondary():
    # get_service_stats goes to the secondary on its own: the SDK derives
    # /devstoreaccount1-secondary from the primary endpoint.
    stats = svc.get_service_stats()
    check_equal(stats["geo_replication"]["status"], "live", "get_service_stats geo_replication status")
    # A client in secondary location mode reads the same data there.
    sec = TableServiceClient.from_connection_string(CS, location_mode="secondary")
    got = sec.get_table_client(TABLE).get_entity("tx", "c")
    check_equal(got["v"], 31, "entity c read through the secondary")
    step("get_service_stats reaches the secondary (status live); reads in secondary location mode")


def delete_table():
    svc.delete_table(TABLE)
    names = [t.name for t in svc.list_tables()]
    check(TABLE not in names, f"list_tables after delete_table: {names}")
    expect_error("get_entity after delete_table", ResourceNotFoundError, 404, "TableNotFound", lambda: client.get_entity("tx", "a"))
    step(f"delete table {TABLE}")


def main():
    try:
        create_table()
        every_edm_type()
        paged_query()
        transaction_etags()
        failing_transaction()
        sas_read_only()
        stale_etag()
        secondary()
        delete_table()
    except AssertionFailed as e:
        print(f"FAIL {e}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - report any SDK error as a failure
        print(f"FAIL unexpected {type(e).__name__}: {e}", file=sys.stderr)
        import traceback

        traceback.print_exc()
        return 1
    print("python e2e ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
