-- wrk script: replay pre-built raw HTTP/1.1 requests, each once and in order.
--
-- WRK_REQUESTS names a file of requests separated by NUL bytes (bench/_wrk.py
-- writes it). wrk runs for a fixed duration, so the file holds more requests
-- than a run can send; should it run out, it starts over and counts the
-- repeats in "wrapped" so the caller can refuse a run whose duplicate share
-- is no longer the one it built. Prints one JSON line in bench/_loadgen.py's
-- shape.

local requests = {}
do
  local file = assert(io.open(os.getenv("WRK_REQUESTS"), "rb"))
  local data = file:read("*a")
  file:close()
  local start = 1
  while true do
    local stop = string.find(data, "\0", start, true)
    if not stop then break end
    requests[#requests + 1] = string.sub(data, start, stop - 1)
    start = stop + 1
  end
end

local threads = {}
local thread_count = 0

function setup(thread)
  thread:set("offset", thread_count)
  thread_count = thread_count + 1
  threads[thread_count] = thread
end

-- Per-thread state (each wrk thread runs its own copy of this script).
ok, other, wrapped, step, index = 0, 0, 0, 1, 0

function init(args)
  step = tonumber(os.getenv("WRK_THREADS") or "1")
  index = offset
end

function request()
  local found = requests[index + 1]
  if found == nil then
    wrapped = wrapped + 1
    found = requests[(index % #requests) + 1]
  end
  index = index + step
  return found
end

function response(status, headers, body)
  if status == 200 then ok = ok + 1 else other = other + 1 end
end

function done(summary, latency, _)
  local ok_total, other_total, wrapped_total = 0, 0, 0
  for _, thread in ipairs(threads) do
    ok_total = ok_total + thread:get("ok")
    other_total = other_total + thread:get("other")
    wrapped_total = wrapped_total + thread:get("wrapped")
  end
  local seconds = summary.duration / 1e6
  io.write(string.format(
    '{"requests":%d,"seconds":%.3f,"rps":%.1f,"p50_ms":%.2f,"p99_ms":%.2f,'
      .. '"mean_ms":%.2f,"statuses":{"200":%d,"other":%d},"wrapped":%d,"socket_errors":%d}\n',
    summary.requests, seconds, summary.requests / seconds,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.mean / 1000,
    ok_total, other_total, wrapped_total,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
