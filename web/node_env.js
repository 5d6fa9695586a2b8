// web/node_env.js -- --pre-js of the builds that run under Node (the tests, stepformer-cli): the
// process's environment reaches getenv(), as natively (SF_GEMM, SF_TEST_DIR, SF_SOURCE_DIR...).
Module['preRun'] = Module['preRun'] || [];
Module['preRun'].push(function() {
  for (var k in process.env) ENV[k] = process.env[k];
});
