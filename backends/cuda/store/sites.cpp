// Launch sites in the store: written as the collector or an importer gives them (frames, how
// they relate to the launch, CUDA graph nodes), read back for gpuKernel.
#include <algorithm>

#include "store_impl.hpp"

namespace strata::cuda {

using namespace store_errors;

Result<void> Store::addLaunchSite(const LaunchSite& site) {
  Impl& m = *impl_;
  if (auto r = m.beginWrite(); !r) return r;
  m.st.delFrames.bind(1, site.pid).bind(2, site.id);
  if (auto r = sql::run(m.db, m.st.delFrames, kIo, "site_frames"); !r) return r;
  m.st.insSite.bind(1, site.pid).bind(2, site.id).bind(3, static_cast<std::int64_t>(site.python.size()))
      .bind(4, static_cast<std::int64_t>(site.native.size()));
  if (m.siteColumns) {
    const std::string_view attribution = siteAttributionName(site.attribution);
    if (attribution.empty()) m.st.insSite.bindNull(5);
    else m.st.insSite.bindStaticText(5, attribution);
    if (site.callerTid) m.st.insSite.bind(6, site.callerTid).bindText(7, site.waitedIn);
    else m.st.insSite.bindNull(6).bindNull(7);
  }
  if (auto r = sql::run(m.db, m.st.insSite, kIo, "launch_sites"); !r) return r;
  for (std::size_t i = 0; i < site.python.size(); ++i) {
    const PythonFrame& f = site.python[i];
    m.st.insFrame.bind(1, site.pid).bind(2, site.id).bindStaticText(3, "python").bind(4, static_cast<std::int64_t>(i))
        .bindText(5, f.function).bindText(6, f.file).bind(7, f.line).bindNull(8).bindNull(9);
    if (m.siteColumns) {
      if (f.evalCall) m.st.insFrame.bind(10, f.evalCall);
      else m.st.insFrame.bindNull(10);
    }
    if (auto r = sql::run(m.db, m.st.insFrame, kIo, "site_frames"); !r) return r;
  }
  for (std::size_t i = 0; i < site.native.size(); ++i) {
    m.st.insFrame.bind(1, site.pid).bind(2, site.id).bindStaticText(3, "native").bind(4, static_cast<std::int64_t>(i));
    // What the source resolved (the collector's dladdr, the live reader's DWARF) is kept: after
    // the program is gone its addresses mean nothing.
    const NativeFrame* f = i < site.nativeFrames.size() && site.nativeFrames[i].pc == site.native[i] ? &site.nativeFrames[i] : nullptr;
    const std::string_view function = f ? (f->function.empty() ? std::string_view(f->symbol) : std::string_view(f->function)) : "";
    if (function.empty()) m.st.insFrame.bindNull(5);
    else m.st.insFrame.bindText(5, function);
    if (f && !f->file.empty()) m.st.insFrame.bindText(6, f->file).bind(7, f->line);
    else m.st.insFrame.bindNull(6).bindNull(7);
    m.st.insFrame.bindU(8, site.native[i]);
    if (f && !f->module.empty()) m.st.insFrame.bindText(9, f->module);
    else m.st.insFrame.bindNull(9);
    if (auto r = sql::run(m.db, m.st.insFrame, kIo, "site_frames"); !r) return r;
  }
  // Resolved frames are rare (one list per new launch key): statements made here, not kept.
  auto del = sql::Stmt::prepare(m.db, "DELETE FROM native_frames WHERE pid=? AND site=?", kIo, false);
  if (!del) return del.takeError();
  del->bind(1, site.pid).bind(2, site.id);
  if (auto r = sql::run(m.db, *del, kIo, "native_frames"); !r) return r;
  if (!site.nativeFrames.empty()) {
    auto ins = sql::Stmt::prepare(m.db, "INSERT INTO native_frames(pid,site,depth,module,module_address,symbol) VALUES(?,?,?,?,?,?)",
                                  kIo, false);
    if (!ins) return ins.takeError();
    for (std::size_t i = 0; i < site.nativeFrames.size(); ++i) {
      const NativeFrame& f = site.nativeFrames[i];
      ins->bind(1, site.pid).bind(2, site.id).bind(3, static_cast<std::int64_t>(i)).bindText(4, f.module)
          .bindU(5, f.elfAddress).bindText(6, f.symbol);
      if (auto r = sql::run(m.db, *ins, kIo, "native_frames"); !r) return r;
    }
  }
  return {};
}

Result<void> Store::addGraphNode(const GraphNodeSite& node) {
  Impl& m = *impl_;
  if (auto r = m.beginWrite(); !r) return r;
  auto ins = sql::Stmt::prepare(m.db, "INSERT OR REPLACE INTO graph_nodes(pid,node,site,origin) VALUES(?,?,?,?)", kIo, false);
  if (!ins) return ins.takeError();
  ins->bind(1, node.pid).bindU(2, node.node).bind(3, node.site).bindText(4, node.origin);
  return sql::run(m.db, *ins, kIo, "graph_nodes");
}

SiteFrames Store::Impl::siteFrames(std::uint32_t pid, std::uint32_t site) {
  SiteFrames out;
  out.site = site;
  auto q = sql::Stmt::prepare(db, siteColumns ? "SELECT attribution,caller_tid,waited_in FROM launch_sites WHERE pid=? AND id=?"
                                              : "SELECT NULL,NULL,NULL FROM launch_sites WHERE pid=? AND id=?",
                              kIo, false);
  if (q) {
    q->bind(1, pid).bind(2, site);
    if (q->step() == SQLITE_ROW) {
      out.known = true;
      out.attribution = q->isNull(0) ? SiteAttribution::Unknown : siteAttributionFromName(q->text(0));
      if (!q->isNull(1)) out.callerTid = static_cast<std::uint32_t>(q->i64(1));
      if (!q->isNull(2)) out.waitedIn = std::string(q->text(2));
    }
  }
  const char* frames =
      siteColumns ? "SELECT kind,function,file,line,address,module,eval_call FROM site_frames WHERE pid=? AND site=? ORDER BY kind,depth"
                  : "SELECT kind,function,file,line,address,module,NULL FROM site_frames WHERE pid=? AND site=? ORDER BY kind,depth";
  auto f = sql::Stmt::prepare(db, frames, kIo, false);
  if (!f)  // a store of format 1 (no module column)
    f = sql::Stmt::prepare(db, "SELECT kind,function,file,line,address,NULL,NULL FROM site_frames WHERE pid=? AND site=? ORDER BY kind,depth", kIo, false);
  if (f) {
    f->bind(1, pid).bind(2, site);
    while (f->step() == SQLITE_ROW) {
      if (f->text(0) == "python") {
        out.python.push_back(PythonFrame{std::string(f->text(1)), std::string(f->text(2)), static_cast<int>(f->i64(3)),
                                         f->isNull(6) ? 0 : static_cast<int>(f->i64(6))});
      } else {
        out.native.push_back(f->u64(4));
        NativeFrame n;
        n.pc = f->u64(4);
        n.function = std::string(f->text(1));
        n.file = std::string(f->text(2));
        n.line = static_cast<int>(f->i64(3));
        n.module = std::string(f->text(5));
        out.nativeFrames.push_back(std::move(n));
      }
    }
  }
  // Frames with nothing resolved (no function, file or module) are only addresses: no list.
  if (std::none_of(out.nativeFrames.begin(), out.nativeFrames.end(), [](const NativeFrame& n) {
        return !n.function.empty() || !n.file.empty() || !n.module.empty();
      }))
    out.nativeFrames.clear();
  // A store opened read-only from before native_frames existed has none: nothing to add.
  auto n = sql::Stmt::prepare(db, "SELECT depth,module,module_address,symbol FROM native_frames WHERE pid=? AND site=? ORDER BY depth", kIo, false);
  if (n) {
    n->bind(1, pid).bind(2, site);
    std::vector<NativeFrame> resolved;
    while (n->step() == SQLITE_ROW) {
      auto depth = static_cast<std::size_t>(n->i64(0));
      if (depth != resolved.size() || depth >= out.native.size()) break;
      resolved.push_back(NativeFrame{out.native[depth], n->u64(2), std::string(n->text(1)), std::string(n->text(3))});
    }
    // Both tables describe the same frames: site_frames the function, file and line, this one
    // the module address and symbol the collector named.
    if (resolved.size() == out.native.size() && out.nativeFrames.size() == out.native.size()) {
      for (std::size_t i = 0; i < resolved.size(); ++i) {
        NativeFrame& o = out.nativeFrames[i];
        o.elfAddress = resolved[i].elfAddress;
        o.symbol = resolved[i].symbol;
        if (o.module.empty()) o.module = resolved[i].module;
      }
    } else if (resolved.size() == out.native.size()) {
      out.nativeFrames = std::move(resolved);
    }
  }
  return out;
}

}  // namespace strata::cuda
