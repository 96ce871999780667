-- wrk script for `npm run bench`: Host and Authorization headers, per-request paths and
-- bodies, and one JSON summary line at the end. Configured by environment variables:
--   BENCH_HOST, BENCH_KEY        Host header, bearer key (optional)
--   BENCH_METHOD, BENCH_PATH     request line; "{id}" in the path is a random id 1..BENCH_MAX_ID
--   BENCH_KIND                   fixed | patch_order | create_customer | product_batch
--   BENCH_MAX_ID                 ids are drawn from 1..BENCH_MAX_ID
--   BENCH_BATCH                  items per product batch
--   BENCH_NONCE                  makes emails and Idempotency-Keys unique across runs
--   BENCH_STORES, BENCH_SPREAD   each request to one of the small stores 1..BENCH_STORES
--                                (its Host and key), drawn "uniform" or "zipf" (s = 1)
--   BENCH_STORES_FROM            uniform draws start at this store instead of 1

local host = os.getenv("BENCH_HOST")
local key = os.getenv("BENCH_KEY")
local method = os.getenv("BENCH_METHOD") or "GET"
local path = os.getenv("BENCH_PATH") or "/"
local kind = os.getenv("BENCH_KIND") or "fixed"
local max_id = tonumber(os.getenv("BENCH_MAX_ID") or "1")
local batch = tonumber(os.getenv("BENCH_BATCH") or "500")
local nonce = os.getenv("BENCH_NONCE") or "0"
local stores = tonumber(os.getenv("BENCH_STORES") or "0")
local spread = os.getenv("BENCH_SPREAD") or "uniform"
local stores_from = tonumber(os.getenv("BENCH_STORES_FROM") or "1")

local thread_count = 0
function setup(thread)
  thread_count = thread_count + 1
  thread:set("thread_id", thread_count)
end

local counter = 0
local random_path = string.find(path, "{id}", 1, true) ~= nil

-- Zipf (s = 1) over 1..stores: cumulative weights, searched by bisection per request.
local zipf_cdf = nil

local function build_zipf()
  zipf_cdf = {}
  local total = 0
  for n = 1, stores do
    total = total + 1 / n
    zipf_cdf[n] = total
  end
  for n = 1, stores do zipf_cdf[n] = zipf_cdf[n] / total end
end

local function pick_store()
  if spread ~= "zipf" then return math.random(stores_from, stores) end
  local u, lo, hi = math.random(), 1, stores
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if zipf_cdf[mid] < u then lo = mid + 1 else hi = mid end
  end
  return lo
end

function init(args)
  math.randomseed(os.time() * 1000 + (thread_id or 0))
  if stores > 0 and spread == "zipf" then build_zipf() end
end

local function headers()
  local h = {}
  if host then h["Host"] = host end
  if key then h["Authorization"] = "Bearer " .. key end
  if method ~= "GET" then h["Content-Type"] = "application/json" end
  return h
end

local function random_id()
  return tostring(math.random(1, max_id))
end

local function batch_body()
  local items = {}
  for i = 1, batch do
    items[i] = '{"id":' .. random_id() .. ',"stock":' .. tostring(math.random(0, 999)) .. '}'
  end
  return '{"items":[' .. table.concat(items, ",") .. ']}'
end

function request()
  counter = counter + 1
  local h = headers()
  local p = path
  if random_path then p = string.gsub(path, "{id}", random_id()) end
  if stores > 0 then
    -- scripts/bench/generate.ts: smallDomain(n) and smallKey(n)
    local n = pick_store()
    h["Host"] = string.format("s%05d.bench.test", n)
    h["Authorization"] = string.format("Bearer svc_sk_benchSmall%030d", n)
  end
  local body = nil
  if kind == "patch_order" then
    if counter % 2 == 0 then body = '{"status":3}' else body = '{"status":7}' end
  elseif kind == "create_customer" then
    local unique = nonce .. "-" .. tostring(thread_id or 0) .. "-" .. tostring(counter)
    h["Idempotency-Key"] = "bench-" .. unique
    body = '{"email":"bench-' .. unique .. '@bench.test","firstName":"Bench","lastName":"Customer"}'
  elseif kind == "product_batch" then
    body = batch_body()
  end
  return wrk.format(method, p, h, body)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"durationUs":%d,"p50Us":%d,"p90Us":%d,"p99Us":%d,"maxUs":%d,' ..
    '"connectErrors":%d,"readErrors":%d,"writeErrors":%d,"statusErrors":%d,"timeouts":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, e.connect, e.read, e.write, e.status, e.timeout))
end
