// A tiny client of localtable's test controls (`localtable serve
// --test-controls`): reset, snapshots, fault rules, latency, the clock and
// the request log, over HTTP, signed with the account key (Shared Key Lite).
// No dependencies: fetch and node:crypto. The wire format is in
// docs/test-controls.md.
//
//   import { TestControls } from "./testcontrols.mjs";
//   const ctl = TestControls.fromConnectionString(process.env.LOCALTABLE_CONNECTION_STRING);
//   await ctl.reset();
//   await ctl.addFault({ operations: ["InsertEntity"], times: 2, action: { type: "serverBusy" } });
import { createHmac } from "node:crypto";

// The emulator's well-known account and key (UseDevelopmentStorage=true).
const DEV_ACCOUNT = "devstoreaccount1";
const DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/** An error answered by the test controls: its HTTP status and service error code. */
export class TestControlError extends Error {
  constructor(status, code, message) {
    super(`test controls: ${status} ${code}: ${message}`);
    this.status = status;
    this.code = code;
  }
}

export class TestControls {
  /**
   * @param {string} endpoint the account's table endpoint, http://127.0.0.1:10002/devstoreaccount1,
   *   or the server's, http://127.0.0.1:10002 (the account's name is then added)
   * @param {string} account the account's name
   * @param {string} key the account's key, base64
   */
  constructor(endpoint, account, key) {
    const base = new URL(endpoint);
    if (base.pathname === "/" || base.pathname === "") base.pathname = "/" + account;
    this.url = new URL(base.href.replace(/\/$/, "") + "/$test");
    this.account = account;
    this.key = Buffer.from(key, "base64");
  }

  /**
   * Reads AccountName, AccountKey and TableEndpoint from an SDK connection string (its
   * setting names in any case). UseDevelopmentStorage=true stands for the emulator's account,
   * devstoreaccount1 with its well-known key, on http://127.0.0.1:10002/devstoreaccount1 (on
   * the host of DevelopmentStorageProxyUri if given); settings named as well keep their values.
   */
  static fromConnectionString(cs) {
    const kv = Object.fromEntries(cs.split(";").filter((p) => p.includes("=")).map((p) => {
      const i = p.indexOf("=");
      return [p.slice(0, i).trim().toLowerCase(), p.slice(i + 1)];
    }));
    if ((kv.usedevelopmentstorage ?? "").toLowerCase() === "true") {
      let origin = "http://127.0.0.1";
      if (kv.developmentstorageproxyuri) {
        const proxy = new URL(kv.developmentstorageproxyuri);
        origin = `${proxy.protocol}//${proxy.hostname}`;
      }
      kv.tableendpoint ||= `${origin}:10002/${DEV_ACCOUNT}`;
      kv.accountname ||= DEV_ACCOUNT;
      kv.accountkey ||= DEV_KEY;
    }
    for (const k of ["tableendpoint", "accountname", "accountkey"]) {
      if (!kv[k]) throw new Error(`test controls: the connection string names no ${k}`);
    }
    return new TestControls(kv.tableendpoint, kv.accountname, kv.accountkey);
  }

  async #call(method, comp, params = {}, body = undefined) {
    const url = new URL(this.url);
    url.searchParams.set("comp", comp);
    for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, String(v));
    const date = new Date().toUTCString();
    const toSign = `${date}\n/${this.account}${url.pathname}?comp=${comp}`;
    const sig = createHmac("sha256", this.key).update(toSign, "utf8").digest("base64");
    const headers = {
      "x-ms-date": date,
      "x-ms-version": "2019-02-02",
      Authorization: `SharedKeyLite ${this.account}:${sig}`,
      Accept: "application/json",
    };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const resp = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await resp.text();
    if (!resp.ok) {
      let message = text;
      try { message = JSON.parse(text)["odata.error"].message.value; } catch { /* not the JSON error format */ }
      throw new TestControlError(resp.status, resp.headers.get("x-ms-error-code") ?? "", message);
    }
    return text ? JSON.parse(text) : undefined;
  }

  /** Empties the account (back to its state at start), or with table, deletes that table's entities. */
  reset({ table } = {}) { return this.#call("POST", "reset", { table }); }
  /** Saves the account's data as the snapshot name (replacing one of that name). */
  snapshot(name) { return this.#call("PUT", "snapshot", { name }); }
  /** Returns the account's data to the snapshot name. */
  restore(name) { return this.#call("POST", "restore", { name }); }
  /** Forgets the snapshot name. */
  deleteSnapshot(name) { return this.#call("DELETE", "snapshot", { name }); }

  /** Puts a fault rule in force and returns it: {id, name, action, hits}. */
  addFault(rule) { return this.#call("POST", "faults", {}, rule); }
  /** Lists the fault rules in force: [{id, name, action, hits}]. */
  faults() { return this.#call("GET", "faults"); }
  /** Removes one fault rule by its id. */
  removeFault(id) { return this.#call("DELETE", "faults", { id }); }
  /** Removes every fault rule. */
  clearFaults() { return this.#call("DELETE", "faults"); }

  /** Delays operations: {operations?, fixed: "50ms"} or {uniform: {min, max}} or {normal: {mean, stddev}}. */
  setLatency(spec) { return this.#call("PUT", "latency", {}, spec); }
  /** Removes the latency of the given operations, or all. */
  clearLatency(operations) { return this.#call("DELETE", "latency", { operations: operations?.join(",") }); }

  /** The clock: {now, frozen}. */
  clock() { return this.#call("GET", "clock"); }
  /** Moves the clock: {freeze: true|false, set: Date|string, advance: "10m"}; returns {now, frozen}. */
  setClock(change) { return this.#call("PUT", "clock", {}, change); }
  /** Advances the clock by a Go duration ("90s", "1h"). */
  advanceClock(d) { return this.setClock({ advance: d }); }

  /** The request log, oldest first: [{seq, operation, table, partitionKey, rowKey, status, errorCode, fault, applied, …}]. */
  log() { return this.#call("GET", "log"); }
  /** Empties the request log. */
  clearLog() { return this.#call("DELETE", "log"); }
}
