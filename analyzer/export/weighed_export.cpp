#include "analyzer/export/weighed_export.h"

namespace gpumemtrace::render {

namespace {

class WeighedExport : public Exporter {
 public:
  WeighedExport(const ExportOptions& options, ExportSink& sink, WriteSites write)
      : options_(options), sink_(sink), write_(write) {}

  void finish(const analysis::Analysis& analysis, report::SymbolizeStack symbolize) override {
    report::Stacks unused;  // the model's sites keep their stack ids; write_ symbolizes them one by one
    report::ModelInput input(analysis, {}, [](replay::StackId) { return report::Frames{}; }, unused);
    report::StackWeightsModel model = report::stack_weights_model(input, options_.what);
    sink_.write(write_(model.sites, symbolize, options_, analysis));
  }

 private:
  ExportOptions options_;
  ExportSink& sink_;
  WriteSites write_;
};

}  // namespace

std::unique_ptr<Exporter> start_weighed_export(const ExportOptions& options, ExportSink& sink, WriteSites write) {
  return std::make_unique<WeighedExport>(options, sink, write);
}

}  // namespace gpumemtrace::render
