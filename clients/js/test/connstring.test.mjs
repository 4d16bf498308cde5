// TestControls.fromConnectionString on the connection strings a JS suite
// may be given: no server is needed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TestControls } from "../testcontrols.mjs";

const DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

test("UseDevelopmentStorage=true is the emulator's account on its default endpoint", () => {
  for (const [cs, want] of [
    ["UseDevelopmentStorage=true", "http://127.0.0.1:10002/devstoreaccount1/$test"],
    ["UseDevelopmentStorage=true;", "http://127.0.0.1:10002/devstoreaccount1/$test"],
    ["UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://emulator.example", "http://emulator.example:10002/devstoreaccount1/$test"],
    ["UseDevelopmentStorage=true;TableEndpoint=http://127.0.0.1:4000/devstoreaccount1", "http://127.0.0.1:4000/devstoreaccount1/$test"],
  ]) {
    const ctl = TestControls.fromConnectionString(cs);
    assert.equal(ctl.url.href, want, cs);
    assert.equal(ctl.account, "devstoreaccount1", cs);
    assert.equal(ctl.key.toString("base64"), DEV_KEY, cs);
  }
});

test("setting names in any case; a missing one is named", () => {
  const ctl = TestControls.fromConnectionString(`accountname=a;ACCOUNTKEY=${DEV_KEY};tableEndpoint=http://127.0.0.1:9/a`);
  assert.equal(ctl.url.href, "http://127.0.0.1:9/a/$test");
  assert.throws(() => TestControls.fromConnectionString("AccountName=a"), /names no tableendpoint/);
});
