"""Tests of the test controls as a Python suite uses them: unittest, with
azure-data-tables for the data and localtable_testcontrols for the controls,
against a server started with ``localtable serve --test-controls``, whose
connection string is in LOCALTABLE_CONNECTION_STRING.

    LOCALTABLE_CONNECTION_STRING=... python3 -m unittest -v test_testcontrols
"""

import base64
import datetime
import urllib.parse
import os
import unittest

from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableClient, TableSasPermissions, generate_table_sas

from localtable_testcontrols import TestControls

CS = os.environ.get("LOCALTABLE_CONNECTION_STRING", "")
PARTS = dict(kv.split("=", 1) for kv in CS.split(";") if "=" in kv)
TABLE = "pyctl"
UTC = datetime.timezone.utc
# Retries as the SDK's default policy makes them, but without the waits.
RETRY = {"retry_backoff_factor": 0.001, "retry_backoff_max": 0.01}


class ConnectionStringTest(unittest.TestCase):
    """TestControls.from_connection_string on the connection strings a suite
    may be given: no server is needed."""

    DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

    def test_development_storage(self):
        for cs, want in [
            ("UseDevelopmentStorage=true", "http://127.0.0.1:10002/devstoreaccount1/$test"),
            ("UseDevelopmentStorage=true;", "http://127.0.0.1:10002/devstoreaccount1/$test"),
            ("UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://emulator.example",
             "http://emulator.example:10002/devstoreaccount1/$test"),
            ("UseDevelopmentStorage=true;TableEndpoint=http://127.0.0.1:4000/devstoreaccount1",
             "http://127.0.0.1:4000/devstoreaccount1/$test"),
        ]:
            ctl = TestControls.from_connection_string(cs)
            self.assertEqual(ctl.url, want, cs)
            self.assertEqual(ctl.account, "devstoreaccount1", cs)
            self.assertEqual(base64.b64encode(ctl.key).decode(), self.DEV_KEY, cs)

    def test_names_in_any_case(self):
        ctl = TestControls.from_connection_string(
            f"accountname=a;ACCOUNTKEY={self.DEV_KEY};tableEndpoint=http://127.0.0.1:9/a")
        self.assertEqual(ctl.url, "http://127.0.0.1:9/a/$test")
        with self.assertRaisesRegex(ValueError, "names no tableendpoint"):
            TestControls.from_connection_string("AccountName=a")


class TestControlsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not CS:
            raise unittest.SkipTest("LOCALTABLE_CONNECTION_STRING is not set")
        cls.ctl = TestControls.from_connection_string(CS)
        cls.client = TableClient.from_connection_string(CS, TABLE, **RETRY)

    def setUp(self):
        # Reset between tests: every test starts from an empty account, no
        # fault rules, the real time and an empty log.
        self.ctl.reset()
        self.ctl.clear_faults()
        self.ctl.clear_latency()
        self.ctl.set_clock(freeze=False, set=datetime.datetime.now(UTC).isoformat())
        self.client.create_table()
        self.ctl.clear_log()

    def test_two_server_busy_then_success(self):
        rule = self.ctl.add_fault({"operations": ["InsertEntity"], "table": TABLE, "times": 2, "action": {"type": "serverBusy"}})
        self.client.create_entity({"PartitionKey": "p", "RowKey": "1", "v": 1})
        faults = self.ctl.faults()
        self.assertEqual([(f["id"], f["hits"]) for f in faults], [(rule["id"], 2)])
        log = [(r["operation"], r["status"], r.get("errorCode", "")) for r in self.ctl.log()]
        self.assertEqual(log[:2], [("InsertEntity", 503, "ServerBusy")] * 2)
        self.assertEqual(log[2][:2], ("InsertEntity", log[2][1]))
        self.assertIn(log[2][1], (201, 204))
        self.assertEqual(len(log), 3)
        self.assertEqual(self.client.get_entity("p", "1")["v"], 1)

    def test_advance_clock_past_sas_expiry(self):
        self.client.create_entity({"PartitionKey": "p", "RowKey": "1", "v": 1})
        sas = generate_table_sas(
            AzureNamedKeyCredential(PARTS["AccountName"], PARTS["AccountKey"]),
            TABLE,
            permission=TableSasPermissions(read=True),
            expiry=datetime.datetime.now(UTC) + datetime.timedelta(minutes=5),
        )
        ro = TableClient(PARTS["TableEndpoint"], TABLE, credential=AzureSasCredential(sas), **RETRY)
        self.assertEqual(ro.get_entity("p", "1")["v"], 1)
        self.ctl.advance_clock("10m")
        with self.assertRaises(HttpResponseError) as cm:
            ro.get_entity("p", "1")
        self.assertEqual(cm.exception.status_code, 403)
        self.assertEqual(cm.exception.error_code, "AuthenticationFailed")
        # Shared Key clients date requests by the real clock: they still work.
        self.assertEqual(self.client.get_entity("p", "1")["v"], 1)

    def test_reset_between_tests_1_write(self):
        self.client.create_entity({"PartitionKey": "p", "RowKey": "left-behind"})

    def test_reset_between_tests_2_gone(self):
        # unittest runs the tests in name order: this runs after _1_write.
        self.assertEqual([e["RowKey"] for e in self.client.list_entities()], [])

    def test_server_endpoint_without_account(self):
        parts = dict(p.split("=", 1) for p in CS.split(";") if p)
        u = urllib.parse.urlsplit(parts["TableEndpoint"])
        bare = TestControls(urllib.parse.urlunsplit(u._replace(path="/")), parts["AccountName"], parts["AccountKey"])
        self.client.create_entity({"PartitionKey": "p", "RowKey": "bare"})
        bare.reset()  # the account's tables are gone with their entities
        with self.assertRaises(HttpResponseError):
            self.client.get_entity("p", "bare")

    def test_snapshot_restore(self):
        self.client.create_entity({"PartitionKey": "p", "RowKey": "fixture"})
        self.ctl.snapshot("fixture")
        self.client.create_entity({"PartitionKey": "p", "RowKey": "extra"})
        self.ctl.restore("fixture")
        self.assertEqual([e["RowKey"] for e in self.client.list_entities()], ["fixture"])

    def test_frozen_clock_stamps_entities(self):
        at = datetime.datetime.now(UTC).replace(microsecond=0) + datetime.timedelta(days=365)
        clock = self.ctl.set_clock(freeze=True, set=at.isoformat())
        self.assertTrue(clock["frozen"])
        self.client.create_entity({"PartitionKey": "p", "RowKey": "t"})
        e = self.client.get_entity("p", "t")
        # At the frozen time, or a tick after if the account stamped that
        # time before (an earlier run): its Timestamps only ever increase.
        self.assertTrue(at <= e.metadata["timestamp"] < at + datetime.timedelta(milliseconds=1), e.metadata["timestamp"])


if __name__ == "__main__":
    unittest.main()
