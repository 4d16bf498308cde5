"""A tiny client of localtable's test controls (``localtable serve --test-controls``).

Reset, snapshots, fault rules, latency, the clock and the request log, over
HTTP, signed with the account key (Shared Key Lite). Standard library only
(urllib). The wire format is in docs/test-controls.md.

    from localtable_testcontrols import TestControls
    ctl = TestControls.from_connection_string(os.environ["LOCALTABLE_CONNECTION_STRING"])
    ctl.reset()
    ctl.add_fault({"operations": ["InsertEntity"], "times": 2, "action": {"type": "serverBusy"}})
"""

import base64
import hashlib
import hmac
import json
import urllib.error
import urllib.parse
import urllib.request
from email.utils import formatdate

__all__ = ["TestControls", "TestControlError"]

# The emulator's well-known account and key (UseDevelopmentStorage=true).
DEV_ACCOUNT = "devstoreaccount1"
DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


class TestControlError(Exception):
    """An error answered by the test controls: its HTTP status and service error code."""

    def __init__(self, status, code, message):
        super().__init__(f"test controls: {status} {code}: {message}")
        self.status = status
        self.code = code


class TestControls:
    """The test controls of one account of a server."""

    __test__ = False  # not a test case, whatever its name

    def __init__(self, endpoint, account, key):
        """endpoint is the account's table endpoint (http://127.0.0.1:10002/devstoreaccount1)
        or the server's (http://127.0.0.1:10002: the account's name is then added),
        account its name and key its key (base64)."""
        parts = urllib.parse.urlsplit(endpoint)
        if parts.path in ("", "/"):
            endpoint = urllib.parse.urlunsplit(parts._replace(path="/" + account))
        self.url = endpoint.rstrip("/") + "/$test"
        self.account = account
        self.key = base64.b64decode(key)

    @classmethod
    def from_connection_string(cls, cs):
        """Reads AccountName, AccountKey and TableEndpoint from an SDK connection string
        (its setting names in any case). UseDevelopmentStorage=true stands for the
        emulator's account, devstoreaccount1 with its well-known key, on
        http://127.0.0.1:10002/devstoreaccount1 (on the host of DevelopmentStorageProxyUri
        if given); settings named as well keep their values."""
        parts = {}
        for kv in cs.split(";"):
            if "=" in kv:
                k, v = kv.split("=", 1)
                parts[k.strip().lower()] = v
        if parts.get("usedevelopmentstorage", "").lower() == "true":
            origin = "http://127.0.0.1"
            if parts.get("developmentstorageproxyuri"):
                proxy = urllib.parse.urlsplit(parts["developmentstorageproxyuri"])
                origin = f"{proxy.scheme}://{proxy.hostname}"
            parts.setdefault("tableendpoint", f"{origin}:10002/{DEV_ACCOUNT}")
            parts.setdefault("accountname", DEV_ACCOUNT)
            parts.setdefault("accountkey", DEV_KEY)
        for k in ("tableendpoint", "accountname", "accountkey"):
            if not parts.get(k):
                raise ValueError(f"test controls: the connection string names no {k}")
        return cls(parts["tableendpoint"], parts["accountname"], parts["accountkey"])

    def _call(self, method, comp, params=None, body=None):
        query = {"comp": comp}
        query.update({k: str(v) for k, v in (params or {}).items() if v is not None})
        url = self.url + "?" + urllib.parse.urlencode(query)
        date = formatdate(usegmt=True)
        path = urllib.parse.urlsplit(self.url).path
        to_sign = f"{date}\n/{self.account}{path}?comp={comp}"
        sig = base64.b64encode(hmac.new(self.key, to_sign.encode("utf-8"), hashlib.sha256).digest()).decode()
        headers = {
            "x-ms-date": date,
            "x-ms-version": "2019-02-02",
            "Authorization": f"SharedKeyLite {self.account}:{sig}",
            "Accept": "application/json",
        }
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req) as resp:
                text = resp.read()
        except urllib.error.HTTPError as e:
            text = e.read().decode("utf-8", "replace")
            message = text
            try:
                message = json.loads(text)["odata.error"]["message"]["value"]
            except (ValueError, KeyError, TypeError):
                pass
            raise TestControlError(e.code, e.headers.get("x-ms-error-code", ""), message) from None
        return json.loads(text) if text else None

    def reset(self, table=None):
        """Empties the account (back to its state at start), or with table, deletes that table's entities."""
        return self._call("POST", "reset", {"table": table})

    def snapshot(self, name):
        """Saves the account's data as the snapshot name (replacing one of that name)."""
        return self._call("PUT", "snapshot", {"name": name})

    def restore(self, name):
        """Returns the account's data to the snapshot name."""
        return self._call("POST", "restore", {"name": name})

    def delete_snapshot(self, name):
        """Forgets the snapshot name."""
        return self._call("DELETE", "snapshot", {"name": name})

    def add_fault(self, rule):
        """Puts a fault rule in force and returns it: {id, name, action, hits}."""
        return self._call("POST", "faults", body=rule)

    def faults(self):
        """Lists the fault rules in force: [{id, name, action, hits}]."""
        return self._call("GET", "faults")

    def remove_fault(self, fault_id):
        """Removes one fault rule by its id."""
        return self._call("DELETE", "faults", {"id": fault_id})

    def clear_faults(self):
        """Removes every fault rule."""
        return self._call("DELETE", "faults")

    def set_latency(self, spec):
        """Delays operations: {operations?, fixed: "50ms"} or {uniform: {min, max}} or {normal: {mean, stddev}}."""
        return self._call("PUT", "latency", body=spec)

    def clear_latency(self, operations=None):
        """Removes the latency of the given operations, or all."""
        return self._call("DELETE", "latency", {"operations": ",".join(operations) if operations else None})

    def clock(self):
        """The clock: {now, frozen}."""
        return self._call("GET", "clock")

    def set_clock(self, freeze=None, set=None, advance=None):  # noqa: A002 - the wire's name
        """Moves the clock (freeze: True or False; set: an RFC 3339 time; advance: a Go duration such as "10m")."""
        change = {k: v for k, v in {"freeze": freeze, "set": set, "advance": advance}.items() if v is not None}
        return self._call("PUT", "clock", body=change)

    def advance_clock(self, duration):
        """Advances the clock by a Go duration ("90s", "1h")."""
        return self.set_clock(advance=duration)

    def log(self):
        """The request log, oldest first: [{seq, operation, table, partitionKey, rowKey, status, errorCode, fault, applied, ...}]."""
        return self._call("GET", "log")

    def clear_log(self):
        """Empties the request log."""
        return self._call("DELETE", "log")
