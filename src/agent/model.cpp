// agent/model.cpp
#include "agent/model.h"

namespace agent {

namespace {
class ProviderModel : public Model {
 public:
  explicit ProviderModel(std::unique_ptr<llm::Provider> p) : p_(std::move(p)) {}
  std::string name() const override { return p_->name(); }
  bool next(const llm::Request& req, const std::vector<sandbox::Verdict>&, llm::Reply* out,
            llm::Error* err) override {
    return p_->complete(req, out, err);
  }
  const llm::Price* price() const override { return p_->price(); }

 private:
  std::unique_ptr<llm::Provider> p_;
};
}  // namespace

std::unique_ptr<Model> wrap_provider(std::unique_ptr<llm::Provider> p) {
  return std::make_unique<ProviderModel>(std::move(p));
}

}  // namespace agent
