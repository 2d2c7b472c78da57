// The stacks of several processes (the ranks of a job) merged into one tree, STAT style:
// `strata stacks --tree` and the parallelStacks request.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/python/attach/snapshot.hpp"
#include "strata/stacks/stacks.hpp"

namespace strata::stacks {

namespace {

namespace json = boost::json;

constexpr std::size_t kMaxNativeFrames = 8192;  // per thread: the tree is of whole stacks

// The rank a process has in a distributed job, from its environment as the process sees it
// now (`report["environRank"]`, read from libc's environ while it was stopped: a rank started by
// torch.multiprocessing.spawn sets RANK itself), else as its launcher started it (torchrun,
// mpirun, srun: /proc/PID/environ); empty: none.
std::string rankOf(pid_t pid, const json::object& report) {
  if (report.contains("environRank")) return std::string(report.at("environRank").as_string());
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::map<std::string, std::string> env;
  std::size_t at = 0;
  while (at < all.size()) {
    std::size_t end = all.find('\0', at);
    if (end == std::string::npos) end = all.size();
    std::string entry = all.substr(at, end - at);
    if (auto eq = entry.find('='); eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
    at = end + 1;
  }
  for (const char* name : python::attach::kRankVariables)
    if (auto it = env.find(name); it != env.end() && !it->second.empty()) return it->second;
  return "";
}

// One node of the merged tree: a frame, the threads whose stacks pass through it.
struct TreeNode {
  std::string label;
  json::object frame;
  std::vector<std::string> threads;  // "rank R / NAME (tid)" or "pid P / NAME (tid)"
  std::vector<std::string> owners;   // "rank R" or "pid P", one entry per thread
  std::vector<std::unique_ptr<TreeNode>> children;
};

std::string frameLabel(const json::object& f) {
  auto str = [&](const char* k) { return f.contains(k) && f.at(k).is_string() ? std::string(f.at(k).as_string()) : std::string(); };
  std::string where = str("file");
  if (!where.empty() && f.contains("line")) where += ":" + std::to_string(f.at("line").to_number<long>());
  std::string name = str("function");
  if (str("kind") == "python") return name + " (" + where + ")";
  if (name.empty()) name = str("module") + "+" + str("offset");
  return where.empty() ? name : name + " (" + where + ")";
}

// "ranks 0-2, 5, pid 812": the owners of a node, each once, ranks as ranges.
std::string ownersText(const std::vector<std::string>& owners) {
  std::vector<long> ranks;
  std::vector<std::string> others;
  for (const auto& o : owners) {
    if (o.rfind("rank ", 0) == 0) ranks.push_back(std::strtol(o.c_str() + 5, nullptr, 10));
    else if (std::find(others.begin(), others.end(), o) == others.end()) others.push_back(o);
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string text;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    text += (text.empty() ? (ranks.size() == 1 ? "rank " : "ranks ") : ", ") + std::to_string(ranks[i]);
    if (j > i) text += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  for (const auto& o : others) text += (text.empty() ? "" : ", ") + o;
  return text;
}

void addPath(TreeNode& root, const std::vector<const json::object*>& path, const std::string& thread, const std::string& owner) {
  TreeNode* node = &root;
  node->threads.push_back(thread);
  node->owners.push_back(owner);
  for (const json::object* f : path) {
    std::string label = frameLabel(*f);
    TreeNode* next = nullptr;
    for (auto& c : node->children)
      if (c->label == label) next = c.get();
    if (!next) {
      node->children.push_back(std::make_unique<TreeNode>());
      next = node->children.back().get();
      next->label = label;
      next->frame = *f;
      next->frame.erase("index");
      next->frame.erase("locals");
    }
    next->threads.push_back(thread);
    next->owners.push_back(owner);
    node = next;
  }
}

json::object treeJson(const TreeNode& n) {
  json::object out = n.frame;
  out["label"] = n.label;
  out["count"] = n.threads.size();
  out["owners"] = ownersText(n.owners);
  json::array threads;
  for (const auto& t : n.threads) threads.push_back(json::string(t));
  out["threads"] = std::move(threads);
  json::array kids;
  for (const auto& c : n.children) kids.push_back(treeJson(*c));
  out["children"] = std::move(kids);
  return out;
}

// Children with more threads first; a chain of single children keeps its order.
void printTree(const TreeNode& n, int depth, std::string& text) {
  std::vector<const TreeNode*> kids;
  for (const auto& c : n.children) kids.push_back(c.get());
  std::stable_sort(kids.begin(), kids.end(), [](const TreeNode* a, const TreeNode* b) { return a->threads.size() > b->threads.size(); });
  for (const TreeNode* c : kids) {
    text += std::string(2 * depth, ' ') + "[" + std::to_string(c->threads.size()) + "] " + c->label;
    if (c->children.size() != 1 || kids.size() > 1 || depth == 0) text += "   <- " + ownersText(c->owners);
    text += "\n";
    printTree(*c, depth + 1, text);
  }
}

// Merges the reports of `inspectProcess` into one tree, outermost frames at the top.
ParallelStacks mergeReports(const std::vector<std::pair<pid_t, json::object>>& reports, bool pythonOnly) {
  TreeNode root;
  json::array processes;
  std::size_t threadCount = 0;
  for (const auto& [pid, report] : reports) {
    std::string rank = rankOf(pid, report);
    std::string owner = rank.empty() ? "pid " + std::to_string(pid) : "rank " + rank;
    json::object proc{{"pid", pid}};
    if (!rank.empty()) proc["rank"] = std::strtol(rank.c_str(), nullptr, 10);
    if (report.contains("error")) {
      proc["error"] = report.at("error");
      processes.push_back(std::move(proc));
      continue;
    }
    if (report.contains("python")) proc["python"] = report.at("python");
    processes.push_back(std::move(proc));
    for (const auto& tv : report.at("threads").as_array()) {
      const json::object& t = tv.as_object();
      std::vector<const json::object*> path;
      for (const auto& fv : t.at("frames").as_array()) {
        const json::object& f = fv.as_object();
        if (f.contains("kind") && f.at("kind") == "interpreter") continue;
        path.push_back(&f);
      }
      if (path.empty()) continue;  // a thread with no frame of the kind asked for
      std::reverse(path.begin(), path.end());
      std::string thread = owner + " / " + std::string(t.at("name").as_string()) + " (" +
                           std::to_string(t.at("id").to_number<long>()) + ")";
      addPath(root, path, thread, owner);
      ++threadCount;
    }
  }
  ParallelStacks out;
  out.text = std::to_string(threadCount) + " threads" + (pythonOnly ? " with Python frames" : "") + " in " +
             std::to_string(reports.size()) + " processes (" + ownersText(root.owners) + ")\n";
  for (const auto& [pid, report] : reports)
    if (report.contains("error")) out.text += "  process " + std::to_string(pid) + ": " + std::string(report.at("error").as_string()) + "\n";
  printTree(root, 0, out.text);
  out.json = json::object{{"processes", std::move(processes)}, {"threads", threadCount}, {"tree", treeJson(root)}};
  return out;
}

}  // namespace

Result<ParallelStacks> parallelStacks(std::vector<pid_t> pids, bool children, bool pythonOnly,
                                      const std::function<bool()>& cancelled) {
  if (children) pids = withDescendants(std::move(pids));
  Options each;
  each.readRank = true;
  each.pythonOnly = pythonOnly;
  each.maxFrames = kMaxNativeFrames;
  // Read-only and one process at a time: each is held only while its stacks are read. A
  // launcher that is not Python (mpirun, srun) or a rank that ended meanwhile is listed with
  // why; the tree is of the others.
  std::vector<std::pair<pid_t, json::object>> reports;
  std::string errors;
  for (pid_t pid : pids) {
    if (cancelled && cancelled()) return Error{errors::kCancelled, "parallelStacks: cancelled", false};
    json::object report;
    std::string ignored;
    if (auto r = inspectProcess(pid, each, report, ignored); !r) {
      report = json::object{{"pid", pid}, {"error", r.error().message}};
      errors += (errors.empty() ? "" : "; ") + r.error().message;
    }
    reports.emplace_back(pid, std::move(report));
  }
  bool any = std::any_of(reports.begin(), reports.end(), [](const auto& r) { return !r.second.contains("error"); });
  if (!any) return Error{errors::kNoSuchProcess, errors.empty() ? std::string("no process to read") : errors, true};
  return mergeReports(reports, pythonOnly);
}

}  // namespace strata::stacks
