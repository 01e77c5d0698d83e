// The text of the registry's duplicate and conflict reports.
#ifndef ET_OPS_SRC_REGISTRY_MESSAGES_H
#define ET_OPS_SRC_REGISTRY_MESSAGES_H

#include <string>
#include <vector>

#include "registry/batch.h"

namespace et_ops::detail {

// One operator of a batch that collides with a different registered copy.
struct Collision {
  const Record* registered;
  const Record* incoming;
};

std::string describe_origin(const Origin& origin);

// The `fatal` policy's abort message; its first line is
// "Re-registering <operator>".
std::string fatal_duplicate_message(const Collision& collision, const PolicyChoice& policy);

// The `first-wins` rejection of a batch whose copies differ.
std::string conflict_message(const Origin& incoming, const std::vector<Collision>& conflicts);

}  // namespace et_ops::detail

#endif  // ET_OPS_SRC_REGISTRY_MESSAGES_H
