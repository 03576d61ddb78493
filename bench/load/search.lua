-- wrk script: POST lexical searches (top_k 10) cycling through the queries
-- of the file named by STRATA_QUERIES (one query a line), one counter per
-- wrk thread, offset by thread id so threads do not move in lock-step.
--   STRATA_QUERIES=q.txt STRATA_COLLECTION=code wrk -t2 -c8 -d20s --latency \
--     -s bench/load/search.lua http://127.0.0.1:7790
-- STRATA_API_KEY=KEY sends "Authorization: Bearer KEY" (a server run with
-- --api-keys); STRATA_VERIFY=1 asks for verified hits.
local queries = {}
local path = os.getenv("STRATA_QUERIES") or "queries.txt"
for line in io.lines(path) do
  if line ~= "" then
    queries[#queries + 1] = line:gsub("\\", "\\\\"):gsub('"', '\\"')
  end
end
if #queries == 0 then error("no queries in " .. path) end
local collection = os.getenv("STRATA_COLLECTION") or "code"
local verify = os.getenv("STRATA_VERIFY") == "1"
local apikey = os.getenv("STRATA_API_KEY") -- a server with --api-keys
local counter = 0
local threads = {}

function setup(thread)
  thread:set("id", #threads)
  threads[#threads + 1] = thread
end

function init(args)
  counter = (id or 0) * 7919
end

function request()
  counter = counter + 1
  local q = queries[(counter % #queries) + 1]
  local body = '{"text":"' .. q .. '","mode":"lexical","top_k":10' .. (verify and ',"verify":true' or '') .. '}'
  local headers = {["Content-Type"] = "application/json"}
  if apikey then headers["Authorization"] = "Bearer " .. apikey end
  return wrk.format("POST", "/v1/collections/" .. collection .. "/search", headers, body)
end

function response(status, headers, body)
  if status ~= 200 then
    errors = (errors or 0) + 1
    if errors <= 3 then io.stderr:write("status " .. status .. ": " .. body:sub(1, 200) .. "\n") end
  end
end
